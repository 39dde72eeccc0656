// Command protobreak fails when the .proto files break wire compatibility with a baseline:
// `make lint` compares proto/ with the main branch's copy (deploy/protobreak.sh). Both are
// compiled by the pinned protoc into descriptor sets, which this reads:
//
//	protobreak <baseline.pb> <current.pb>
//
// A change breaks when a message, enum, service or method of the baseline is gone; when a
// field number is gone without being reserved, or keeps its number under another name, type,
// cardinality or oneof; when an enum value number is gone or renamed without being reserved;
// when a method changes its input, output or streaming. Adding anything is allowed.
package main

import (
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: protobreak <baseline.pb> <current.pb>")
		os.Exit(2)
	}
	old, err := load(os.Args[1])
	if err == nil {
		var cur *protoregistry.Files
		if cur, err = load(os.Args[2]); err == nil {
			if problems := Breaks(old, cur); len(problems) > 0 {
				for _, p := range problems {
					fmt.Fprintln(os.Stderr, "breaking change:", p)
				}
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintln(os.Stderr, "protobreak:", err)
	os.Exit(2)
}

// load reads a descriptor set (protoc --descriptor_set_out --include_imports).
func load(path string) (*protoregistry.Files, error) {
	b, err := os.ReadFile(path) //nolint:gosec // the descriptor sets protobreak.sh names on the command line
	if err != nil {
		return nil, err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return protodesc.NewFiles(&set)
}

// Breaks lists the breaking changes from old to cur.
func Breaks(old, cur *protoregistry.Files) []string {
	var out []string
	old.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		out = append(out, messages(f.Messages(), cur)...)
		out = append(out, enums(f.Enums(), cur)...)
		for i := range f.Services().Len() {
			out = append(out, service(f.Services().Get(i), cur)...)
		}
		return true
	})
	return out
}

func messages(ms protoreflect.MessageDescriptors, cur *protoregistry.Files) []string {
	var out []string
	for i := range ms.Len() {
		m := ms.Get(i)
		d, err := cur.FindDescriptorByName(m.FullName())
		n, ok := d.(protoreflect.MessageDescriptor)
		if err != nil || !ok {
			out = append(out, fmt.Sprintf("message %s removed", m.FullName()))
			continue
		}
		for j := range m.Fields().Len() {
			f := m.Fields().Get(j)
			g := n.Fields().ByNumber(f.Number())
			switch {
			case g == nil && !n.ReservedRanges().Has(f.Number()):
				out = append(out, fmt.Sprintf("field %s = %d removed without reserving its number", f.FullName(), f.Number()))
			case g == nil:
			case g.Name() != f.Name():
				out = append(out, fmt.Sprintf("field %d of %s renamed %s → %s", f.Number(), m.FullName(), f.Name(), g.Name()))
			case g.Kind() != f.Kind() || g.Cardinality() != f.Cardinality() || g.IsMap() != f.IsMap():
				out = append(out, fmt.Sprintf("field %s = %d changed type or cardinality", f.FullName(), f.Number()))
			case typeName(g) != typeName(f):
				out = append(out, fmt.Sprintf("field %s = %d changed type %s → %s", f.FullName(), f.Number(), typeName(f), typeName(g)))
			case oneofName(g) != oneofName(f):
				out = append(out, fmt.Sprintf("field %s = %d moved from oneof %q to %q", f.FullName(), f.Number(), oneofName(f), oneofName(g)))
			}
		}
		out = append(out, messages(m.Messages(), cur)...)
		out = append(out, enums(m.Enums(), cur)...)
	}
	return out
}

func enums(es protoreflect.EnumDescriptors, cur *protoregistry.Files) []string {
	var out []string
	for i := range es.Len() {
		e := es.Get(i)
		d, err := cur.FindDescriptorByName(e.FullName())
		n, ok := d.(protoreflect.EnumDescriptor)
		if err != nil || !ok {
			out = append(out, fmt.Sprintf("enum %s removed", e.FullName()))
			continue
		}
		for j := range e.Values().Len() {
			v := e.Values().Get(j)
			w := n.Values().ByNumber(v.Number())
			switch {
			case w == nil && !n.ReservedRanges().Has(v.Number()):
				out = append(out, fmt.Sprintf("enum value %s = %d removed without reserving its number", v.FullName(), v.Number()))
			case w != nil && w.Name() != v.Name():
				out = append(out, fmt.Sprintf("enum value %d of %s renamed %s → %s", v.Number(), e.FullName(), v.Name(), w.Name()))
			}
		}
	}
	return out
}

func service(s protoreflect.ServiceDescriptor, cur *protoregistry.Files) []string {
	d, err := cur.FindDescriptorByName(s.FullName())
	n, ok := d.(protoreflect.ServiceDescriptor)
	if err != nil || !ok {
		return []string{fmt.Sprintf("service %s removed", s.FullName())}
	}
	var out []string
	for i := range s.Methods().Len() {
		m := s.Methods().Get(i)
		k := n.Methods().ByName(m.Name())
		switch {
		case k == nil:
			out = append(out, fmt.Sprintf("method %s removed", m.FullName()))
		case k.Input().FullName() != m.Input().FullName() || k.Output().FullName() != m.Output().FullName() ||
			k.IsStreamingClient() != m.IsStreamingClient() || k.IsStreamingServer() != m.IsStreamingServer():
			out = append(out, fmt.Sprintf("method %s changed its input, output or streaming", m.FullName()))
		}
	}
	return out
}

// typeName is the message or enum a field holds; "" for scalars.
func typeName(f protoreflect.FieldDescriptor) protoreflect.FullName {
	switch {
	case f.Message() != nil:
		return f.Message().FullName()
	case f.Enum() != nil:
		return f.Enum().FullName()
	}
	return ""
}

func oneofName(f protoreflect.FieldDescriptor) protoreflect.Name {
	if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return o.Name()
	}
	return ""
}
