package pwscript

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Input goes to the page as trusted CDP input events, as Playwright's does.

func (bp *browserPage) mouseMove(ctx context.Context, x, y float64) error {
	_, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y})
	return err
}

func (bp *browserPage) mouseClick(ctx context.Context, x, y float64, button input.MouseButton, count int, modifiers int64) error {
	if err := bp.mouseMove(ctx, x, y); err != nil {
		return err
	}
	buttons := map[input.MouseButton]int64{input.MouseButtonLeft: 1, input.MouseButtonRight: 2, input.MouseButtonMiddle: 4}[button]
	for i := 1; i <= count; i++ {
		for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
			held := buttons
			if typ == input.DispatchMouseEventTypeMouseReleased {
				held = 0
			}
			if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{
				Type: typ, X: x, Y: y, Button: button, Buttons: held, ClickCount: int64(i), Modifiers: modifiers,
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (bp *browserPage) insertText(ctx context.Context, text string) error {
	_, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: text})
	return err
}

// keyIndex finds kb's key definitions by their DOM key value ("Enter", "ArrowDown", "a").
var keyIndex = sync.OnceValue(func() map[string]*kb.Key {
	m := map[string]*kb.Key{}
	for _, k := range kb.Keys {
		if old, ok := m[k.Key]; !ok || (old.Shift && !k.Shift) {
			m[k.Key] = k
		}
	}
	return m
})

// modifierBits are CDP's modifier flags by Playwright's key names.
var modifierBits = map[string]int64{"Alt": 1, "Control": 2, "ControlOrMeta": 2, "Meta": 4, "Shift": 8}

// parseKey reads Playwright's key syntax: "Enter", "a", "Control+A", "Shift+ArrowLeft".
func parseKey(spec string) (mods []string, key *kb.Key, err error) {
	name, modPart := spec, ""
	if len(spec) > 1 {
		if i := strings.LastIndex(spec[:len(spec)-1], "+"); i >= 0 {
			modPart, name = spec[:i], spec[i+1:]
		}
	}
	if modPart != "" {
		for _, p := range strings.Split(modPart, "+") {
			if _, ok := modifierBits[p]; !ok {
				return nil, nil, fmt.Errorf("unknown modifier %q in key %q", p, spec)
			}
			if p == "ControlOrMeta" {
				p = "Control"
			}
			mods = append(mods, p)
		}
	}
	if name == "ControlOrMeta" {
		name = "Control"
	}
	if k, ok := keyIndex()[name]; ok {
		return mods, k, nil
	}
	if utf8.RuneCountInString(name) == 1 {
		r, _ := utf8.DecodeRuneInString(name)
		if k, ok := kb.Keys[r]; ok {
			return mods, k, nil
		}
	}
	return nil, nil, fmt.Errorf("Unknown key: %q", name) //nolint:staticcheck // ST1005: Playwright's own message, kept for parity
}

// pressKey presses and releases a key with modifiers, as keyboard.press does.
func (bp *browserPage) pressKey(ctx context.Context, spec string) error {
	mods, key, err := parseKey(spec)
	if err != nil {
		return err
	}
	var bits int64
	for _, m := range mods {
		bits |= modifierBits[m]
		if err := bp.keyEvent(ctx, input.DispatchKeyEventTypeRawKeyDown, keyIndex()[m], bits, false); err != nil {
			return err
		}
	}
	if err := bp.keyEvent(ctx, input.DispatchKeyEventTypeKeyDown, key, bits, true); err != nil {
		return err
	}
	if err := bp.keyEvent(ctx, input.DispatchKeyEventTypeKeyUp, key, bits, false); err != nil {
		return err
	}
	for i := len(mods) - 1; i >= 0; i-- {
		bits &^= modifierBits[mods[i]]
		if err := bp.keyEvent(ctx, input.DispatchKeyEventTypeKeyUp, keyIndex()[mods[i]], bits, false); err != nil {
			return err
		}
	}
	return nil
}

// keyEvent sends one key event; a printable key without Control/Meta also carries its text.
func (bp *browserPage) keyEvent(ctx context.Context, typ input.DispatchKeyEventType, k *kb.Key, mods int64, withText bool) error {
	p := input.DispatchKeyEventParams{
		Type: typ, Modifiers: mods, Key: k.Key, Code: k.Code,
		WindowsVirtualKeyCode: k.Windows, NativeVirtualKeyCode: k.Native,
	}
	if withText && k.Print && mods&(2|4) == 0 {
		p.Text, p.UnmodifiedText = k.Text, k.Unmodified
		if mods&8 != 0 && strings.ToUpper(k.Text) != k.Text {
			p.Text = strings.ToUpper(k.Text)
		}
	} else if typ == input.DispatchKeyEventTypeKeyDown {
		p.Type = input.DispatchKeyEventTypeRawKeyDown
	}
	_, err := chromedp.Call(ctx, input.DispatchKeyEvent, p)
	return err
}

// typeText types text key by key; characters without a key are inserted as text.
func (bp *browserPage) typeText(ctx context.Context, text string, delay func() error) error {
	for _, r := range text {
		if r == '\n' {
			r = '\r'
		}
		var err error
		if k, ok := kb.Keys[r]; ok && k.Print {
			if err = bp.keyEvent(ctx, input.DispatchKeyEventTypeKeyDown, k, 0, true); err == nil {
				err = bp.keyEvent(ctx, input.DispatchKeyEventTypeKeyUp, k, 0, false)
			}
		} else {
			err = bp.insertText(ctx, string(r))
		}
		if err != nil {
			return err
		}
		if err := delay(); err != nil {
			return err
		}
	}
	return nil
}
