// go generate for the event model: the drivers' own kinds come from the event table.

package event

//go:generate go run ../eventdef/kindgen ../eventdef/table.go event.go kinds_drivers.go
