package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"
)

// maxBodyBytes bounds every request body.
const maxBodyBytes = 1 << 20

// fieldError is one rule broken by one field; it renders as "field: message".
type fieldError struct {
	Field   string
	Message string
}

func (f fieldError) Error() string {
	if f.Field == "" {
		return f.Message
	}
	return f.Field + ": " + f.Message
}

// fieldErrors is every rule an input broke; the API renders each as one errors[] item.
type fieldErrors []fieldError

func (fe fieldErrors) Error() string {
	parts := make([]string, len(fe))
	for i, f := range fe {
		parts[i] = f.Error()
	}
	return strings.Join(parts, "; ")
}

// object is a JSON object read from a request, decoded field by field so that every problem is
// reported with its field name, absent is told apart from null, and unread fields can be
// rejected as unknown properties.
type object struct {
	prefix string
	raw    map[string]json.RawMessage
	read   map[string]bool
	errs   *fieldErrors
}

// readObject reads the request body (at most 1 MiB) as one JSON object.
func readObject(c *gin.Context) (*object, error) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, badRequest("request body is larger than %d bytes", maxBodyBytes)
		}
		return nil, badRequest("request body could not be read")
	}
	return parseObject(body)
}

// decodeBody reads the request body as one object and decodes it with decode, which records
// the rules it breaks in o; a field decode did not read is an unknown property.
func decodeBody[T any](c *gin.Context, decode func(o *object) T) (T, error) {
	o, err := readObject(c)
	if err != nil {
		var zero T
		return zero, err
	}
	v := decode(o)
	o.Strict()
	return v, o.Err()
}

// parseObject decodes body as one JSON object.
func parseObject(body []byte) (*object, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, badRequest("request body is required and must be a JSON object")
	}
	if body[0] != '{' {
		return nil, badRequest("request body must be a JSON object")
	}
	if hasEscapedNUL(body) {
		return nil, badRequest("request body must not contain NUL characters (\\u0000)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, badRequest("request body is not valid JSON: %s", jsonErrorText(err))
	}
	if dec.More() {
		return nil, badRequest("request body must hold exactly one JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("request body must hold exactly one JSON object")
	}
	return &object{raw: raw, read: map[string]bool{}, errs: &fieldErrors{}}, nil
}

// hasEscapedNUL reports whether JSON text holds the escape \u0000 (a raw NUL byte is not valid
// JSON anyway). PostgreSQL text cannot store NUL, so such input is refused before it gets there.
func hasEscapedNUL(b []byte) bool {
	for i := 0; i < len(b)-1; i++ {
		if b[i] == '\\' {
			if b[i+1] == 'u' && i+5 < len(b) && string(b[i+2:i+6]) == "0000" {
				return true
			}
			i++ // skip the escaped character
		}
	}
	return false
}

func jsonErrorText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	return err.Error()
}

// name is the full field name used in messages, e.g. "assertions[2].type".
func (o *object) name(field string) string { return o.prefix + field }

// Has reports whether field is present (null included).
func (o *object) Has(field string) bool { _, ok := o.raw[field]; return ok }

// IsNull reports whether field is present and null.
func (o *object) IsNull(field string) bool {
	v, ok := o.raw[field]
	return ok && string(bytes.TrimSpace(v)) == "null"
}

// emptyAsNull reads field as null when it is the empty string: a few fields take "" from real
// clients (documented in docs/api-extensions.md) to mean "not set".
func (o *object) emptyAsNull(field string) {
	if v, ok := o.raw[field]; ok && string(bytes.TrimSpace(v)) == `""` {
		o.raw[field] = json.RawMessage("null")
	}
}

// Empty reports whether the object has no fields.
func (o *object) Empty() bool { return len(o.raw) == 0 }

// Fail records a broken rule of field.
func (o *object) Fail(field, format string, args ...any) {
	*o.errs = append(*o.errs, fieldError{Field: o.name(field), Message: fmt.Sprintf(format, args...)})
}

// Require records "is required" when field is absent or null, and reports whether it is there.
func (o *object) Require(field string) bool {
	if !o.Has(field) || o.IsNull(field) {
		o.read[field] = true
		o.Fail(field, "is required")
		return false
	}
	return true
}

// Forbid marks field as not accepted here, with a reason.
func (o *object) Forbid(field, reason string) {
	if o.Has(field) {
		o.read[field] = true
		o.Fail(field, "%s", reason)
	}
}

// Ignore marks fields as read without decoding them (accepted and unused).
func (o *object) Ignore(fields ...string) {
	for _, f := range fields {
		o.read[f] = true
	}
}

// Strict records "unknown property" for every field that nothing read.
func (o *object) Strict() {
	var unknown []string
	for k := range o.raw {
		if !o.read[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		o.Fail(k, "unknown property")
	}
}

// Err returns the recorded problems, or nil.
func (o *object) Err() error {
	if len(*o.errs) == 0 {
		return nil
	}
	return *o.errs
}

// Opt is one decoded field: absent, null, or a value.
type Opt[T any] struct {
	Set  bool // present in the input (null included)
	Null bool // present and null
	V    T
}

// Ptr returns nil when absent or null, else a pointer to the value.
func (o Opt[T]) Ptr() *T {
	if !o.Set || o.Null {
		return nil
	}
	v := o.V
	return &v
}

// Value reports the value and whether one was given (present and not null).
func (o Opt[T]) Value() (T, bool) { return o.V, o.Set && !o.Null }

// field decodes one field as T, recording a type error with the field's name. A type error
// leaves the result unset, so later rules do not pile onto it.
func field[T any](o *object, name string) Opt[T] {
	v := fieldOf(o, name, reflect.TypeFor[T]())
	out := Opt[T]{Set: v.Set, Null: v.Null}
	if v.Set && !v.Null {
		out.V = v.V.Elem().Interface().(T)
	}
	return out
}

// fieldOf is field for a type known at run time; V is a pointer to the decoded value.
func fieldOf(o *object, name string, t reflect.Type) Opt[reflect.Value] {
	o.read[name] = true
	raw, ok := o.raw[name]
	if !ok {
		return Opt[reflect.Value]{}
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return Opt[reflect.Value]{Set: true, Null: true}
	}
	v := reflect.New(t)
	if err := strictUnmarshal(raw, v.Interface()); err != nil {
		if isWholeNumberOverflow(err) {
			o.Fail(name, "%s", outOfRange)
		} else {
			o.Fail(name, "must be %s", typeNameOf(t))
		}
		return Opt[reflect.Value]{}
	}
	if !intsInRange(v.Elem()) {
		o.Fail(name, "%s", outOfRange)
		return Opt[reflect.Value]{}
	}
	return Opt[reflect.Value]{Set: true, V: v}
}

// outOfRange is the message for an integer the storage cannot hold. Every integer the API
// stores is a PostgreSQL integer (32 bits); a larger value would otherwise be cut short on its
// way there (9999999999 stored as 1410065407) or fail inside the database as a server error.
var outOfRange = fmt.Sprintf("is out of range: must be an integer from %d to %d", math.MinInt32, math.MaxInt32)

// isWholeNumberOverflow reports whether err is a whole JSON number too large for its Go integer
// (encoding/json names the literal in the error), as opposed to a fraction or another type.
func isWholeNumberOverflow(err error) bool {
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) || ute.Type == nil {
		return false
	}
	switch ute.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return false
	}
	lit, ok := strings.CutPrefix(ute.Value, "number ")
	return ok && !strings.ContainsAny(lit, ".eE")
}

// intsInRange reports whether every integer inside v (nested in slices, maps, structs and
// pointers included) fits a 32-bit signed integer.
func intsInRange(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		return v.Int() >= math.MinInt32 && v.Int() <= math.MaxInt32
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return v.Uint() <= math.MaxInt32
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || intsInRange(v.Elem())
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if !intsInRange(v.Index(i)) {
				return false
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if !intsInRange(it.Value()) {
				return false
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if !intsInRange(v.Field(i)) {
				return false
			}
		}
	}
	return true
}

// nonNull is field that also refuses an explicit null.
func nonNull[T any](o *object, name string) Opt[T] {
	v := field[T](o, name)
	if v.Null {
		o.Fail(name, "must be %s, not null", typeName[T]())
		return Opt[T]{}
	}
	return v
}

// objects decodes field as an array of objects, each with its own prefix for messages.
func objects(o *object, name string) (items []*object, set, null bool) {
	o.read[name] = true
	raw, ok := o.raw[name]
	if !ok {
		return nil, false, false
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, true, true
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil {
		o.Fail(name, "must be an array of objects")
		return nil, false, false
	}
	items = make([]*object, 0, len(arr))
	for i, el := range arr {
		var m map[string]json.RawMessage
		if t := bytes.TrimSpace(el); len(t) == 0 || t[0] != '{' || json.Unmarshal(el, &m) != nil {
			o.Fail(fmt.Sprintf("%s[%d]", name, i), "must be an object")
			return nil, false, false
		}
		items = append(items, &object{prefix: fmt.Sprintf("%s%s[%d].", o.prefix, name, i), raw: m, read: map[string]bool{}, errs: o.errs})
	}
	return items, true, false
}

// strictUnmarshal decodes JSON into v without the leniencies of encoding/json that matter for
// an API: numbers into integers must be whole, and nested objects reject unknown fields.
func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func typeName[T any]() string { return typeNameOf(reflect.TypeFor[T]()) }

// typeNameOf names a type as messages do: "a string", "an integer", ...
func typeNameOf(t reflect.Type) string {
	switch {
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "a boolean"
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int32, t.Kind() == reflect.Int64:
		return "an integer"
	case t.Kind() == reflect.Float64:
		return "a number"
	case t == reflect.TypeFor[[]string]():
		return "an array of strings"
	case t == reflect.TypeFor[map[string]string]():
		return "an object whose values are strings"
	}
	return fmt.Sprintf("of type %s", t)
}
