// Package attr is the attribute model shared by the stages: keys and values as OTLP's
// common.v1.AnyValue carries them, without importing pdata. tenant and appctx build them
// from procfs and the application's published context, assemble carries them on a Job,
// emit (through attr/attrpdata) converts them to pcommon values.
package attr

import (
	"strconv"
	"strings"
)

// Kind is the type of a Value.
type Kind uint8

const (
	KindEmpty Kind = iota
	KindString
	KindBool
	KindInt
	KindDouble
	KindBytes
	KindArray
	KindMap
)

// Value is one attribute value. Only the field selected by Kind is meaningful.
type Value struct {
	Kind   Kind
	Str    string
	Bool   bool
	Int    int64
	Double float64
	Bytes  []byte
	Array  []Value
	Map    []Attribute
}

// Attribute is a key and its value. Slices of Attribute keep the publisher's order.
type Attribute struct {
	Key   string
	Value Value
}

// String returns a string attribute.
func String(k, v string) Attribute { return Attribute{Key: k, Value: Value{Kind: KindString, Str: v}} }

// Int returns an integer attribute.
func Int(k string, v int64) Attribute { return Attribute{Key: k, Value: Value{Kind: KindInt, Int: v}} }

// Bool returns a boolean attribute.
func Bool(k string, v bool) Attribute {
	return Attribute{Key: k, Value: Value{Kind: KindBool, Bool: v}}
}

// AsString renders any value as text (arrays as [a,b], maps as {k=v}); used for logs,
// tests and the few places that need a string (service.name).
func (v Value) AsString() string {
	var b strings.Builder
	v.render(&b)
	return b.String()
}

func (v Value) render(b *strings.Builder) {
	switch v.Kind {
	case KindString:
		b.WriteString(v.Str)
	case KindBool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case KindInt:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case KindDouble:
		b.WriteString(strconv.FormatFloat(v.Double, 'g', -1, 64))
	case KindBytes:
		b.WriteString(strconv.Quote(string(v.Bytes)))
	case KindArray:
		b.WriteByte('[')
		for i, e := range v.Array {
			if i > 0 {
				b.WriteByte(',')
			}
			e.render(b)
		}
		b.WriteByte(']')
	case KindMap:
		b.WriteByte('{')
		for i, kv := range v.Map {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(kv.Key)
			b.WriteByte('=')
			kv.Value.render(b)
		}
		b.WriteByte('}')
	}
}

// Lookup returns the value of key in attrs (the last one wins if a publisher repeated it).
func Lookup(attrs []Attribute, key string) (Value, bool) {
	for i := len(attrs) - 1; i >= 0; i-- {
		if attrs[i].Key == key {
			return attrs[i].Value, true
		}
	}
	return Value{}, false
}
