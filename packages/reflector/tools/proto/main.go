// Command proto-shapes writes, for every Kubernetes API type client-go's
// scheme registers (and every struct reachable from one), how its JSON form
// follows from its protobuf form: per protobuf message, each field's
// protobuf name, JSON name, omitempty and omitzero, whether the Go field is
// a pointer (so a zero value on the wire is kept), whether it is inlined in
// JSON, and the Go type it decodes into, with the types that marshal
// themselves (Time, MicroTime, Duration, Quantity, IntOrString,
// RawExtension, FieldsV1) named. The reflector's protobuf decoder reads it
// to give objects the shape the JSON path gives. Read with reflection from
// the same module versions as the control plane, so the two cannot drift.
//
// Usage: node generate.mjs (which runs it and writes ../../proto/shapes.json)
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// Type is a Go type as the decoder needs to know it.
type Type struct {
	// string, bool, int, float, bytes, message, time, microtime, duration,
	// quantity, intorstring, rawextension, fieldsv1
	Kind    string `json:"k"`
	Message string `json:"m,omitempty"`
	Elem    *Type  `json:"e,omitempty"` // slice element or map value
	Slice   bool   `json:"s,omitempty"`
	Map     bool   `json:"mp,omitempty"`
}

// Field is one protobuf field of a message and its JSON form.
type Field struct {
	Proto     string `json:"p"`
	JSON      string `json:"j"`
	OmitEmpty bool   `json:"oe,omitempty"`
	OmitZero  bool   `json:"oz,omitempty"`
	Pointer   bool   `json:"ptr,omitempty"`
	Inline    bool   `json:"in,omitempty"`
	Type      Type   `json:"t"`
}

var specials = map[string]string{
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":        "time",
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime":   "microtime",
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":    "duration",
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":    "fieldsv1",
	"k8s.io/apimachinery/pkg/api/resource.Quantity":    "quantity",
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString":  "intorstring",
	"k8s.io/apimachinery/pkg/runtime.RawExtension":     "rawextension",
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

// messageName is the protobuf full name of a Go struct type: its package path with dots, then its name.
func messageName(t reflect.Type) string {
	return strings.ReplaceAll(t.PkgPath(), "/", ".") + "." + t.Name()
}

type walker struct {
	messages map[string][]Field
	errors   []string
}

func (w *walker) typeOf(t reflect.Type) Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if special, ok := specials[t.PkgPath()+"."+t.Name()]; ok {
		return Type{Kind: special}
	}
	switch t.Kind() {
	case reflect.String:
		return Type{Kind: "string"}
	case reflect.Bool:
		return Type{Kind: "bool"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Type{Kind: "int"}
	case reflect.Float32, reflect.Float64:
		return Type{Kind: "float"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return Type{Kind: "bytes"}
		}
		elem := w.typeOf(t.Elem())
		return Type{Kind: "slice", Slice: true, Elem: &elem}
	case reflect.Map:
		elem := w.typeOf(t.Elem())
		return Type{Kind: "map", Map: true, Elem: &elem}
	case reflect.Struct:
		if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
			w.errors = append(w.errors, fmt.Sprintf("%s marshals itself and is not known", t))
		}
		w.walk(t)
		return Type{Kind: "message", Message: messageName(t)}
	}
	w.errors = append(w.errors, fmt.Sprintf("unsupported Go type %s", t))
	return Type{Kind: "unknown"}
}

func (w *walker) walk(t reflect.Type) {
	name := messageName(t)
	if _, seen := w.messages[name]; seen {
		return
	}
	w.messages[name] = nil // mark before recursing
	var fields []Field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("protobuf")
		if tag == "" || tag == "-" || !f.IsExported() {
			continue // TypeMeta and the like: not in the protobuf message
		}
		protoName := ""
		for _, part := range strings.Split(tag, ",") {
			if strings.HasPrefix(part, "name=") {
				protoName = strings.TrimPrefix(part, "name=")
			}
		}
		jsonTag := f.Tag.Get("json")
		jsonName, opts, _ := strings.Cut(jsonTag, ",")
		field := Field{
			Proto:     protoName,
			JSON:      jsonName,
			OmitEmpty: strings.Contains(","+opts+",", ",omitempty,"),
			OmitZero:  strings.Contains(","+opts+",", ",omitzero,"),
			Pointer:   f.Type.Kind() == reflect.Pointer,
			Inline:    f.Anonymous && jsonName == "",
			Type:      w.typeOf(f.Type),
		}
		if jsonName == "" && !field.Inline {
			field.JSON = f.Name
		}
		if jsonName == "-" {
			continue
		}
		fields = append(fields, field)
	}
	w.messages[name] = fields
}

func main() {
	w := &walker{messages: map[string][]Field{}}
	roots := []reflect.Type{
		reflect.TypeOf(metav1.Status{}),
		reflect.TypeOf(metav1.PartialObjectMetadata{}),
		reflect.TypeOf(metav1.PartialObjectMetadataList{}),
	}
	// apiVersion -> kind -> message: what an envelope's TypeMeta names.
	kinds := map[string]map[string]string{}
	for gvk, t := range scheme.Scheme.AllKnownTypes() {
		roots = append(roots, t)
		if t.Kind() != reflect.Struct || gvk.Version == "__internal" {
			continue
		}
		apiVersion := gvk.GroupVersion().String()
		if kinds[apiVersion] == nil {
			kinds[apiVersion] = map[string]string{}
		}
		kinds[apiVersion][gvk.Kind] = messageName(t)
	}
	for _, t := range roots {
		if t.Kind() == reflect.Struct {
			w.walk(t)
		}
	}
	if len(w.errors) > 0 {
		sort.Strings(w.errors)
		fmt.Fprintln(os.Stderr, strings.Join(w.errors, "\n"))
		os.Exit(1)
	}
	out := map[string]any{
		"comment":  "Generated by packages/reflector/tools/proto (go run .); do not edit.",
		"messages": w.messages,
		"kinds":    kinds,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
