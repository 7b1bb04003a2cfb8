package event

import "slices"

// Builtin names an attribute every event has, kept in an Event field
// rather than in Attrs: its timestamp or its position in the stream.
type Builtin uint8

const (
	NotBuiltin Builtin = iota
	BuiltinTS          // ts, timestamp: Event.TS
	BuiltinSeq         // seq: Event.Seq
)

// BuiltinAttr is a built-in attribute and its spellings. Like every
// attribute name they are case-sensitive; their values are ints.
type BuiltinAttr struct {
	Name    string   // the name listings show: ts, seq
	Aliases []string // other names of the same attribute
	Builtin Builtin
}

// builtins is the one table of built-in attributes. A stream attribute of
// the same name (a CSV column "seq") is shadowed by the built-in.
var builtins = []BuiltinAttr{
	{"ts", []string{"timestamp"}, BuiltinTS},
	{"seq", nil, BuiltinSeq},
}

// BuiltinAttrs returns the built-in attributes in listing order.
func BuiltinAttrs() []BuiltinAttr { return slices.Clone(builtins) }

// LookupBuiltin returns the built-in an attribute name reads, or NotBuiltin.
func LookupBuiltin(name string) Builtin {
	for _, a := range builtins {
		if a.Name == name || slices.Contains(a.Aliases, name) {
			return a.Builtin
		}
	}
	return NotBuiltin
}

// Get returns the built-in b of the event, or its attribute in slot when b
// is NotBuiltin.
func (e *Event) Get(slot int, b Builtin) Value {
	switch b {
	case BuiltinTS:
		return IntValue(e.TS)
	case BuiltinSeq:
		return IntValue(e.Seq)
	}
	return e.Attr(slot)
}
