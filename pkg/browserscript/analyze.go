package browserscript

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// Analysis is what the compiled program of a script declares, found in its syntax tree: the
// control plane accepts a script that declares a test and uses nothing refused.
type Analysis struct {
	// DeclaresTest is true when the program calls the test function of TestModule — however
	// it is bound: test, an alias (import { test as it }, const { test: base } = require(…)),
	// a namespace (pw.test) or the result of test.extend(…) — to declare a test (test(…),
	// test.only(…), test.skip(title, fn)…).
	DeclaresTest bool
	// Refused lists the uses of refused APIs (refused.go), in source order.
	Refused []RefusedUse
}

// RefusedUse is a use of a refused API at a line of the user's file.
type RefusedUse struct {
	Refusal
	Line, Column int
}

func (u RefusedUse) Error() string { return fmt.Sprintf("%s at line %d", u.API(), u.Line) }

// Message is the refusal with its line: "not supported: browser.newContext() at line 7 — …".
func (u RefusedUse) Message() string {
	msg := fmt.Sprintf("not supported: %s at line %d", u.API(), u.Line)
	if u.Why != "" {
		msg += " — " + u.Why
	}
	return msg
}

// testModifiers are the members of test that declare a test when given a body.
var testModifiers = map[string]bool{"only": true, "skip": true, "fixme": true, "fail": true, "slow": true}

// Analyze parses prog (the output of Transform) and finds what it declares and refuses.
// Positions are the user's, through the program's inline source map.
func Analyze(prog *Program) (*Analysis, error) {
	tree, err := parser.ParseFile(nil, prog.Filename, prog.Code, 0, parser.WithSourceMapLoader(func(string) ([]byte, error) {
		return nil, errors.New("source maps are inline")
	}))
	if err != nil {
		return nil, fmt.Errorf("parse the program: %w", err)
	}
	a := &analyzer{file: tree.File, module: map[string]bool{}, test: map[string]bool{}, held: map[string]string{}, used: map[string]bool{}, covered: map[*ast.DotExpression]bool{}}
	// Bindings come before their uses, but a helper declared above may use a binding made
	// below: two passes bind everything before the last one judges.
	a.walk(tree, a.bind)
	a.walk(tree, a.bind)
	a.walk(tree, a.judge)
	for local, object := range a.held {
		if !a.used[local] {
			if r, ok := RefusedObject(object); ok {
				a.refuse(r, a.heldAt[local])
			}
		}
	}
	slices.SortStableFunc(a.out.Refused, func(x, y RefusedUse) int {
		return cmp.Or(cmp.Compare(x.Line, y.Line), cmp.Compare(x.Column, y.Column))
	})
	a.out.Refused = slices.Compact(a.out.Refused)
	return &a.out, nil
}

type analyzer struct {
	file   *file.File
	module map[string]bool   // local names of TestModule's exports object
	test   map[string]bool   // local names of the test function
	held   map[string]string // local names of objects refused (refused.go): the object's name
	heldAt map[string]file.Idx
	used   map[string]bool // held names whose members the script uses
	// covered are reads of refused exports (pw.chromium) already refused by the member
	// read of them (pw.chromium.launch).
	covered map[*ast.DotExpression]bool
	out     Analysis
}

// walk calls visit on every node of the tree, parents first.
func (a *analyzer) walk(n any, visit func(ast.Node)) {
	v := reflect.ValueOf(n)
	a.walkValue(v, visit)
}

var nodeType = reflect.TypeFor[ast.Node]()

func (a *analyzer) walkValue(v reflect.Value, visit func(ast.Node)) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Type().Implements(nodeType) {
			if n, ok := v.Interface().(ast.Node); ok {
				visit(n)
			}
		}
		a.walkValue(v.Elem(), visit)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[file.File]() {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				a.walkValue(v.Field(i), visit)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			a.walkValue(v.Index(i), visit)
		}
	}
}

// bind records the names the script gives TestModule, its test function and refused objects.
func (a *analyzer) bind(n ast.Node) {
	switch n := n.(type) {
	case *ast.Binding:
		a.bindTarget(n.Target, n.Initializer)
	case *ast.AssignExpression:
		if t, ok := n.Left.(ast.BindingTarget); ok {
			a.bindTarget(t, n.Right)
		}
	case *ast.CallExpression:
		// The fixtures a test, hook or fixture of the file destructures.
		if !a.isTestRelated(n.Callee) {
			return
		}
		for _, arg := range n.ArgumentList {
			a.bindFixtures(arg)
			if obj, ok := arg.(*ast.ObjectLiteral); ok && a.isExtend(n.Callee) {
				for _, p := range obj.Value {
					if kv, ok := p.(*ast.PropertyKeyed); ok {
						v := kv.Value
						if arr, ok := v.(*ast.ArrayLiteral); ok && len(arr.Value) > 0 {
							v = arr.Value[0] // [fixture, { scope }]
						}
						a.bindFixtures(v)
					}
				}
			}
		}
	}
}

func (a *analyzer) bindTarget(target ast.BindingTarget, value ast.Expression) {
	if value == nil {
		return
	}
	switch t := target.(type) {
	case *ast.Identifier:
		name := t.Name.String()
		switch {
		case a.isModule(value):
			a.module[name] = true
		case a.isTest(value):
			a.test[name] = true
		default:
			if obj := a.moduleExport(value); obj != "" {
				a.hold(name, obj, t.Idx)
			}
		}
	case *ast.ObjectPattern:
		if !a.isModule(value) {
			return
		}
		for _, p := range t.Properties {
			key, local := patternProperty(p)
			switch {
			case local == nil:
			case key == "test":
				a.test[local.Name.String()] = true
			case key == "default":
				a.test[local.Name.String()] = true
			default:
				if _, ok := RefusedObject(key); ok {
					a.hold(local.Name.String(), key, local.Idx)
				}
			}
		}
	}
}

// bindFixtures reads the fixtures a function literal destructures from its first parameter.
func (a *analyzer) bindFixtures(fn ast.Expression) {
	var params *ast.ParameterList
	switch f := fn.(type) {
	case *ast.ArrowFunctionLiteral:
		params = f.ParameterList
	case *ast.FunctionLiteral:
		params = f.ParameterList
	}
	if params == nil || len(params.List) == 0 {
		return
	}
	pat, ok := params.List[0].Target.(*ast.ObjectPattern)
	if !ok {
		return
	}
	for _, p := range pat.Properties {
		key, local := patternProperty(p)
		if local == nil {
			continue
		}
		if _, ok := RefusedObject(key); ok {
			a.hold(local.Name.String(), key, local.Idx)
		}
	}
}

func (a *analyzer) hold(local, object string, at file.Idx) {
	a.held[local] = object
	if a.heldAt == nil {
		a.heldAt = map[string]file.Idx{}
	}
	if _, ok := a.heldAt[local]; !ok {
		a.heldAt[local] = at
	}
}

// patternProperty returns the key of a destructured property and the name it binds.
func patternProperty(p ast.Property) (string, *ast.Identifier) {
	switch p := p.(type) {
	case *ast.PropertyShort:
		return p.Name.Name.String(), &p.Name
	case *ast.PropertyKeyed:
		key := ""
		switch k := p.Key.(type) {
		case *ast.StringLiteral:
			key = k.Value.String()
		case *ast.Identifier:
			key = k.Name.String()
		}
		v := p.Value
		if b, ok := v.(*ast.AssignExpression); ok {
			v = b.Left // { page = x }
		}
		if id, ok := v.(*ast.Identifier); ok {
			return key, id
		}
	}
	return "", nil
}

// judge finds test declarations and uses of refused APIs.
func (a *analyzer) judge(n ast.Node) {
	switch n := n.(type) {
	case *ast.CallExpression:
		if a.declares(n) {
			a.out.DeclaresTest = true
		}
		a.judgeUse(n)
		if mod, ok := requireOf(n); ok && mod != TestModule {
			a.refuse(RefusedModule(mod), n.Idx0())
		}
	case *ast.DotExpression:
		member := n.Identifier.Name.String()
		if obj := a.objectOf(n.Left); obj != "" {
			if r, ok := RefusedMember(obj, member); ok {
				a.refuse(r, n.Identifier.Idx)
			}
		}
		if r, ok := RefusedMember("expect(…)", member); ok {
			a.refuse(r, n.Identifier.Idx)
		}
		if obj := a.moduleExport(n); obj != "" && !a.covered[n] {
			// pw.chromium: a refused export reached through the module object, no member of
			// it named.
			r, _ := RefusedObject(obj)
			a.refuse(r, n.Identifier.Idx)
		}
	}
}

func (a *analyzer) refuse(r Refusal, at file.Idx) {
	pos := a.file.Position(int(at) - a.file.Base())
	a.out.Refused = append(a.out.Refused, RefusedUse{Refusal: r, Line: pos.Line, Column: pos.Column})
}

// objectOf names what an expression is, for the refusals of its members: a held refused
// object, or a fixture named as Playwright names it (page, context), or page.context().
func (a *analyzer) objectOf(e ast.Expression) string {
	switch e := e.(type) {
	case *ast.Identifier:
		name := e.Name.String()
		if obj, ok := a.held[name]; ok {
			a.used[name] = true
			return obj
		}
		if name == "page" || name == "context" {
			return name
		}
	case *ast.DotExpression:
		if obj := a.moduleExport(e); obj != "" {
			a.covered[e] = true
			return obj
		}
	case *ast.CallExpression:
		if d, ok := e.Callee.(*ast.DotExpression); ok && d.Identifier.Name == "context" && a.objectOf(d.Left) == "page" {
			return "context"
		}
	case *ast.AwaitExpression:
		return a.objectOf(e.Argument)
	}
	return ""
}

// declares tells whether call declares a test: test(…), or test.only/skip/fixme/fail/slow
// given a body.
func (a *analyzer) declares(call *ast.CallExpression) bool {
	callee := unwrap(call.Callee)
	if a.isTest(callee) {
		return true
	}
	d, ok := callee.(*ast.DotExpression)
	if !ok || !testModifiers[d.Identifier.Name.String()] || !a.isTest(d.Left) {
		return false
	}
	if d.Identifier.Name == "only" {
		return true
	}
	for _, arg := range call.ArgumentList {
		switch arg.(type) {
		case *ast.ArrowFunctionLiteral, *ast.FunctionLiteral:
			return true
		}
	}
	return false
}

// isTest tells whether e is the test function: a name bound to it, module.test,
// module.default, or test.extend(…).
func (a *analyzer) isTest(e ast.Expression) bool {
	switch e := unwrap(e).(type) {
	case *ast.Identifier:
		return a.test[e.Name.String()]
	case *ast.DotExpression:
		name := e.Identifier.Name.String()
		return (name == "test" || name == "default") && a.isModule(e.Left) || name == "test" && a.isTestModuleDefault(e.Left)
	case *ast.CallExpression:
		return a.isExtend(e.Callee)
	}
	return false
}

// isTestModuleDefault: `import pw from '@playwright/test'; pw.test(…)` reaches test through
// the default export, which is test itself in Playwright.
func (a *analyzer) isTestModuleDefault(e ast.Expression) bool {
	d, ok := unwrap(e).(*ast.DotExpression)
	return ok && d.Identifier.Name == "default" && a.isModule(d.Left)
}

func (a *analyzer) isExtend(callee ast.Expression) bool {
	d, ok := unwrap(callee).(*ast.DotExpression)
	return ok && d.Identifier.Name == "extend" && a.isTest(d.Left)
}

// isTestRelated tells whether callee is test or one of its members (test.describe,
// test.beforeEach, test.extend…), whose callbacks receive fixtures.
func (a *analyzer) isTestRelated(callee ast.Expression) bool {
	callee = unwrap(callee)
	for {
		if a.isTest(callee) {
			return true
		}
		d, ok := callee.(*ast.DotExpression)
		if !ok {
			return false
		}
		callee = unwrap(d.Left)
	}
}

// isModule tells whether e is TestModule's exports: require(TestModule), possibly wrapped in
// the compiler's interop helper, or a name bound to it.
func (a *analyzer) isModule(e ast.Expression) bool {
	switch e := unwrap(e).(type) {
	case *ast.Identifier:
		return a.module[e.Name.String()]
	case *ast.CallExpression:
		if mod, ok := requireOf(e); ok {
			return mod == TestModule
		}
		if id, ok := e.Callee.(*ast.Identifier); ok && id.Name == "__toESM" && len(e.ArgumentList) > 0 {
			return a.isModule(e.ArgumentList[0])
		}
	}
	return false
}

// moduleExport names the refused export e reads from TestModule (pw.chromium), or "".
func (a *analyzer) moduleExport(e ast.Expression) string {
	d, ok := unwrap(e).(*ast.DotExpression)
	if !ok || !a.isModule(d.Left) {
		return ""
	}
	if _, ok := RefusedObject(d.Identifier.Name.String()); ok {
		return d.Identifier.Name.String()
	}
	return ""
}

// requireOf returns the module a require("…") call names.
func requireOf(call *ast.CallExpression) (string, bool) {
	id, ok := call.Callee.(*ast.Identifier)
	if !ok || id.Name != "require" || len(call.ArgumentList) != 1 {
		return "", false
	}
	s, ok := call.ArgumentList[0].(*ast.StringLiteral)
	if !ok {
		return "", false
	}
	return s.Value.String(), true
}

// unwrap strips what the compiler wraps callees in: (0, import_test.test) and parentheses.
func unwrap(e ast.Expression) ast.Expression {
	for {
		switch s := e.(type) {
		case *ast.SequenceExpression:
			if len(s.Sequence) == 0 {
				return e
			}
			e = s.Sequence[len(s.Sequence)-1]
		case *ast.OptionalChain:
			e = s.Expression
		case *ast.Optional:
			e = s.Expression
		default:
			return e
		}
	}
}

// judgeUse refuses the options test.use({ … }) names that cannot be honoured (useoptions.go).
func (a *analyzer) judgeUse(call *ast.CallExpression) {
	d, ok := unwrap(call.Callee).(*ast.DotExpression)
	if !ok || d.Identifier.Name != "use" || !a.isTest(d.Left) || len(call.ArgumentList) == 0 {
		return
	}
	obj, ok := call.ArgumentList[0].(*ast.ObjectLiteral)
	if !ok {
		return
	}
	for _, p := range obj.Value {
		kv, ok := p.(*ast.PropertyKeyed)
		if !ok {
			continue
		}
		var key string
		switch k := kv.Key.(type) {
		case *ast.StringLiteral:
			key = k.Value.String()
		case *ast.Identifier:
			key = k.Name.String()
		}
		if kind, r := UseOption(key); kind == UseRefused {
			a.refuse(r, kv.Key.Idx0())
		}
	}
}
