// Encoding of the OTEL_CTX payload: the inverse of DecodeProcessContext, for test writers
// (this package's and tenant's tests, the virtual GPU rig's test application).

package appctx

import (
	"math"

	"github.com/ghostdriver/ghostdriver/internal/attr"
	"google.golang.org/protobuf/encoding/protowire"
)

// EncodeProcessContext encodes pc as the ProcessContext protobuf message.
func EncodeProcessContext(pc ProcessContext) []byte {
	var res []byte
	for _, a := range pc.Resource {
		res = appendMsg(res, 1, appendKeyValue(nil, a))
	}
	if pc.DroppedAttributes != 0 {
		res = protowire.AppendTag(res, 2, protowire.VarintType)
		res = protowire.AppendVarint(res, uint64(pc.DroppedAttributes))
	}
	b := appendMsg(nil, 1, res)
	for _, a := range pc.Extra {
		b = appendMsg(b, 2, appendKeyValue(nil, a))
	}
	return b
}

func appendMsg(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func appendKeyValue(b []byte, a attr.Attribute) []byte {
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, a.Key)
	return appendMsg(b, 2, appendAnyValue(nil, a.Value))
}

func appendAnyValue(b []byte, v attr.Value) []byte {
	switch v.Kind {
	case attr.KindString:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, v.Str)
	case attr.KindBool:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(v.Bool))
	case attr.KindInt:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v.Int))
	case attr.KindDouble:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.Double))
	case attr.KindBytes:
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		b = protowire.AppendBytes(b, v.Bytes)
	case attr.KindArray:
		var arr []byte
		for _, e := range v.Array {
			arr = appendMsg(arr, 1, appendAnyValue(nil, e))
		}
		b = appendMsg(b, 5, arr)
	case attr.KindMap:
		var kvl []byte
		for _, kv := range v.Map {
			kvl = appendMsg(kvl, 1, appendKeyValue(nil, kv))
		}
		b = appendMsg(b, 6, kvl)
	}
	return b
}
