package pwscript

import (
	"github.com/dop251/goja"
)

// equals is Jest's recursive equality: toEqual (strict false) ignores properties whose value
// is undefined and the objects' classes; toStrictEqual (strict true) does not.
func (r *run) equals(a, b goja.Value, strict bool) bool {
	return r.equalsSeen(a, b, strict, map[[2]*goja.Object]bool{})
}

func (r *run) equalsSeen(a, b goja.Value, strict bool, seen map[[2]*goja.Object]bool) bool {
	// An asymmetric matcher (expect.any(String), expect.stringContaining('x')…) on either side
	// decides for itself.
	if m, ok := asymmetricMatch(b); ok {
		return m(a)
	}
	if m, ok := asymmetricMatch(a); ok {
		return m(b)
	}
	ao, aObj := a.(*goja.Object)
	bo, bObj := b.(*goja.Object)
	if !aObj || !bObj {
		if aObj != bObj {
			return false
		}
		return a.SameAs(b) // Object.is, as Jest compares primitives
	}
	if ao == bo {
		return true
	}
	pair := [2]*goja.Object{ao, bo}
	if seen[pair] {
		return true
	}
	seen[pair] = true
	if ao.ClassName() != bo.ClassName() {
		return false
	}
	if strict && constructorName(ao) != constructorName(bo) {
		return false
	}
	switch ao.ClassName() {
	case "Date", "RegExp":
		return ao.String() == bo.String()
	case "Function":
		return false
	case "Error":
		return ao.Get("message").String() == bo.Get("message").String()
	case "Array":
		al, bl := ao.Get("length").ToInteger(), bo.Get("length").ToInteger()
		if al != bl {
			return false
		}
		for i := int64(0); i < al; i++ {
			if !r.equalsSeen(orUndefined(ao.Get(itoa(i))), orUndefined(bo.Get(itoa(i))), strict, seen) {
				return false
			}
		}
		return true
	}
	if m, ok := r.mapLike(ao, bo, strict, seen); ok {
		return m
	}
	keys := map[string]bool{}
	for _, k := range ao.Keys() {
		keys[k] = true
	}
	for _, k := range bo.Keys() {
		keys[k] = true
	}
	for k := range keys {
		av, bv := orUndefined(ao.Get(k)), orUndefined(bo.Get(k))
		if strict && (hasOwn(ao, k) != hasOwn(bo, k)) {
			return false
		}
		if !r.equalsSeen(av, bv, strict, seen) {
			return false
		}
	}
	return true
}

// mapLike compares Maps and Sets by their entries, in order.
func (r *run) mapLike(a, b *goja.Object, strict bool, seen map[[2]*goja.Object]bool) (bool, bool) {
	name := constructorName(a)
	if name != "Map" && name != "Set" {
		return false, false
	}
	entries := func(o *goja.Object) []goja.Value {
		arrayFrom, _ := goja.AssertFunction(r.vm.Get("Array").(*goja.Object).Get("from"))
		v, err := arrayFrom(goja.Undefined(), o)
		if err != nil {
			return nil
		}
		arr := v.(*goja.Object)
		var out []goja.Value
		for _, k := range arr.Keys() {
			out = append(out, arr.Get(k))
		}
		return out
	}
	ae, be := entries(a), entries(b)
	if len(ae) != len(be) {
		return false, true
	}
	for i := range ae {
		if !r.equalsSeen(ae[i], be[i], strict, seen) {
			return false, true
		}
	}
	return true, true
}

func hasOwn(o *goja.Object, k string) bool {
	for _, x := range o.Keys() {
		if x == k {
			return true
		}
	}
	return false
}

func orUndefined(v goja.Value) goja.Value {
	if v == nil {
		return goja.Undefined()
	}
	return v
}

func itoa(i int64) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// asymmetricMatch returns v's asymmetricMatch method when v is an asymmetric matcher.
func asymmetricMatch(v goja.Value) (func(goja.Value) bool, bool) {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil, false
	}
	fn, ok := goja.AssertFunction(o.Get("asymmetricMatch"))
	if !ok {
		return nil, false
	}
	return func(other goja.Value) bool {
		res, err := fn(o, other)
		return err == nil && res.ToBoolean()
	}, true
}
