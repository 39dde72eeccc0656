package main

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// files builds a registry of the generated vantage.v1 files, after edit changes agent.proto.
func files(t *testing.T, edit func(*descriptorpb.FileDescriptorProto)) *protoregistry.Files {
	t.Helper()
	var set descriptorpb.FileDescriptorSet
	seen := map[string]bool{}
	agent := vantagev1.File_vantage_v1_agent_proto
	for i := range agent.Imports().Len() {
		imp := agent.Imports().Get(i).FileDescriptor
		for j := range imp.Imports().Len() {
			p := imp.Imports().Get(j).FileDescriptor
			if !seen[p.Path()] {
				seen[p.Path()] = true
				set.File = append(set.File, protodesc.ToFileDescriptorProto(p))
			}
		}
		if !seen[imp.Path()] {
			seen[imp.Path()] = true
			set.File = append(set.File, protodesc.ToFileDescriptorProto(imp))
		}
	}
	a := proto.Clone(protodesc.ToFileDescriptorProto(agent)).(*descriptorpb.FileDescriptorProto)
	if edit != nil {
		edit(a)
	}
	set.File = append(set.File, a)
	reg, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func message(f *descriptorpb.FileDescriptorProto, name string) *descriptorpb.DescriptorProto {
	for _, m := range f.MessageType {
		if m.GetName() == name {
			return m
		}
	}
	return nil
}

// TestBreaks: each kind of breaking change is named; additions and reserved removals pass.
func TestBreaks(t *testing.T) {
	t.Parallel()
	base := files(t, nil)
	for _, tc := range []struct {
		name string
		edit func(*descriptorpb.FileDescriptorProto)
		want string // "" for no break
	}{
		{"unchanged", func(*descriptorpb.FileDescriptorProto) {}, ""},
		{"a field added", func(f *descriptorpb.FileDescriptorProto) {
			m := message(f, "Register")
			m.Field = append(m.Field, &descriptorpb.FieldDescriptorProto{Name: proto.String("extra"), Number: proto.Int32(99),
				Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
				JsonName: proto.String("extra")})
		}, ""},
		{"a field removed", func(f *descriptorpb.FileDescriptorProto) {
			m := message(f, "Register")
			m.Field = m.Field[1:]
		}, "field vantage.v1.Register.agent_id = 1 removed"},
		{"a field removed and its number reserved", func(f *descriptorpb.FileDescriptorProto) {
			m := message(f, "Register")
			m.Field = m.Field[1:]
			m.ReservedRange = append(m.ReservedRange, &descriptorpb.DescriptorProto_ReservedRange{Start: proto.Int32(1), End: proto.Int32(2)})
		}, ""},
		{"a field renamed", func(f *descriptorpb.FileDescriptorProto) {
			message(f, "Register").Field[0].Name = proto.String("agent")
		}, "renamed agent_id → agent"},
		{"a field's type changed", func(f *descriptorpb.FileDescriptorProto) {
			message(f, "Register").Field[0].Type = descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum()
		}, "changed type"},
		{"a message removed", func(f *descriptorpb.FileDescriptorProto) {
			for i, m := range f.MessageType {
				if m.GetName() == "CanaryAck" {
					f.MessageType = append(f.MessageType[:i], f.MessageType[i+1:]...)
					break
				}
			}
			for _, fl := range message(f, "ControlMessage").Field {
				if fl.GetTypeName() == ".vantage.v1.CanaryAck" {
					fl.TypeName = proto.String(".vantage.v1.ResultAck")
				}
			}
		}, "message vantage.v1.CanaryAck removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := strings.Join(Breaks(base, files(t, tc.edit)), "\n")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("Breaks = %q, want %q", got, tc.want)
			}
		})
	}
}
