package mockagents

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The input: keys, pastes and escape sequences as the terminal sends
// them, the input line they build, and Enter, which submits it, queues it
// or steers with it. Where the agents differ (an Enter lost after a paste,
// a paste shown late, Tab, Esc, what is trimmed) the persona decides.

// feed consumes one read of input.
func (e *engine) feed(chunk []byte) {
	data := append(e.pending, chunk...)
	e.pending = nil
	pasteEndedHere := false
	for len(data) > 0 {
		if e.inPaste {
			i := bytes.Index(data, []byte("\x1b[201~"))
			if i < 0 {
				// Keep a possible partial terminator for the next read.
				keep := min(len(data), 5)
				for k := keep; k > 0; k-- {
					if bytes.HasPrefix([]byte("\x1b[201~"), data[len(data)-k:]) {
						e.pasteBuf.Write(data[:len(data)-k])
						e.pending = append([]byte(nil), data[len(data)-k:]...)
						return
					}
				}
				e.pasteBuf.Write(data)
				return
			}
			e.pasteBuf.Write(data[:i])
			data = data[i+6:]
			e.inPaste = false
			e.endPaste()
			pasteEndedHere = true
			continue
		}
		b := data[0]
		switch {
		case b == 0x1b:
			n, ok := e.escape(data)
			if !ok {
				e.pending = append([]byte(nil), data...)
				return
			}
			data = data[n:]
		case b == '\r':
			data = data[1:]
			if pasteEndedHere && e.dialog == nil && e.p.loseEnterAfterPaste() {
				continue // an Enter in the same read as the paste's end is lost
			}
			e.enter()
		case b == '\n':
			data = data[1:]
			e.typeText("\n", false)
		case b == '\t':
			data = data[1:]
			e.tab()
		case b == 0x7f || b == 0x08:
			data = data[1:]
			e.backspace()
		case b == 0x03:
			data = data[1:]
			if e.inputText() == "" {
				e.quit(0)
				return
			}
			e.setInput("")
		case b == 0x04:
			data = data[1:]
			if e.inputText() == "" {
				e.quit(0)
				return
			}
		case b == 0x15:
			data = data[1:]
			if e.dialog == nil {
				e.killLine()
			}
		case b == 0x05: // Ctrl-E: the cursor to the end
			data = data[1:]
			if e.tail != "" {
				t := e.tail
				e.tail = ""
				e.typeText(t, false)
			}
		case b < 0x20:
			data = data[1:]
		default:
			r, size := utf8.DecodeRune(data)
			if r == utf8.RuneError && size == 1 && !utf8.FullRune(data) {
				e.pending = append([]byte(nil), data...)
				return
			}
			data = data[size:]
			if d := e.dialog; d != nil && !d.textBox {
				if n, ok := d.keys[r]; ok {
					e.choose(n)
				} else if r >= '1' && r <= '9' && int(r-'1') < len(d.items) {
					e.choose(int(r - '1'))
				}
				continue
			}
			e.typeText(string(r), true)
		}
	}
}

// escape handles an escape sequence at the start of data, returning its
// length, or ok=false when it is incomplete.
func (e *engine) escape(data []byte) (int, bool) {
	if len(data) == 1 || data[1] != '[' {
		// A lone ESC (or ESC not starting a CSI) is the Esc key.
		e.esc()
		return 1, true
	}
	for i := 2; i < len(data); i++ {
		if data[i] >= 0x40 && data[i] <= 0x7e {
			switch string(data[:i+1]) {
			case "\x1b[200~":
				e.inPaste = true
				e.pasteBuf.Reset()
			case "\x1b[A":
				e.arrow(-1)
			case "\x1b[B":
				e.arrow(+1)
			}
			return i + 1, true
		}
	}
	return 0, false
}

func (e *engine) arrow(delta int) {
	if d := e.dialog; d != nil {
		if !d.textBox {
			d.sel = max(0, min(len(d.items)-1, d.sel+delta))
		}
		return
	}
	if items, _ := e.completions(); len(items) > 0 {
		e.menuSel = (e.menuSel + delta + len(items)) % len(items)
		return
	}
	if delta < 0 {
		e.p.up()
	}
}

func (e *engine) esc() {
	if d := e.dialog; d != nil {
		switch {
		case d.textBox, d.panel:
			if d.cancel != nil {
				e.dialog = nil
				d.cancel()
			}
		case d.no >= 0:
			e.choose(d.no)
		}
		return
	}
	if items, _ := e.completions(); len(items) > 0 {
		e.menuOff = true
		return
	}
	if e.p.esc() {
		return
	}
	if e.busy && e.p.interruptible() {
		e.interrupt()
	}
}

func (e *engine) endPaste() {
	text := e.pasteBuf.String()
	e.pasteEnd = time.Now()
	if d := e.dialog; d != nil {
		if d.textBox {
			d.text = append(d.text, text...)
		}
		return // text pasted into a menu goes nowhere
	}
	e.pastes++
	seg := segment{text: []byte(text), paste: true, n: e.pastes, at: e.pasteEnd}
	if e.p.pasted(seg) {
		return
	}
	e.input = append(e.input, seg)
	e.inputChanged()
}

func (e *engine) typeText(s string, typed bool) {
	if d := e.dialog; d != nil {
		if d.textBox && s != "\n" {
			d.text = append(d.text, s...)
		}
		return
	}
	now := time.Now()
	if typed {
		e.p.typed(now)
		e.lastTyped = now
	}
	e.inputChanged()
	if n := len(e.input); n > 0 && !e.input[n-1].paste {
		e.input[n-1].text = append(e.input[n-1].text, s...)
		return
	}
	e.input = append(e.input, segment{text: []byte(s)})
}

func (e *engine) backspace() {
	if d := e.dialog; d != nil {
		if d.textBox && len(d.text) > 0 {
			_, size := utf8.DecodeLastRune(d.text)
			d.text = d.text[:len(d.text)-size]
		}
		return
	}
	n := len(e.input)
	if n == 0 {
		return
	}
	e.inputChanged()
	last := &e.input[n-1]
	if last.paste && e.p.placeholder(*last) != "" {
		// A paste shown as its placeholder goes whole; one shown in
		// full loses a character a press, as typed text does (the real
		// gemini 0.61: "[/ENV]" and the newline before it took 7).
		e.input = e.input[:n-1]
		return
	}
	_, size := utf8.DecodeLastRune(last.text)
	last.text = last.text[:len(last.text)-size]
	if len(last.text) == 0 {
		e.input = e.input[:n-1]
	}
}

func (e *engine) inputChanged() { e.menuSel, e.menuOff = 0, false }

// setInput replaces the input with typed text.
func (e *engine) setInput(s string) {
	e.inputChanged()
	e.input, e.tail = nil, ""
	if s != "" {
		e.input = []segment{{text: []byte(s)}}
	}
}

func (e *engine) inputText() string {
	var b strings.Builder
	for _, s := range e.input {
		b.Write(s.text)
	}
	b.WriteString(e.tail)
	return b.String()
}

func (e *engine) tab() {
	if e.dialog != nil {
		return
	}
	if items, word := e.completions(); len(items) > 0 {
		e.complete(items[e.menuSel], word)
		return
	}
	e.p.tab()
}

func (e *engine) enter() {
	now := time.Now()
	if d := e.dialog; d != nil {
		if d.textBox {
			if len(d.text) > 0 {
				e.dialog = nil
				e.logEntry("dialog", string(d.text))
				d.submit(string(d.text))
			}
			return
		}
		if d.panel {
			return // a panel swallows keys until Esc
		}
		e.choose(d.sel)
		return
	}
	if e.p.enter(now) {
		return
	}
	if strings.TrimSpace(e.inputText()) == "" {
		return
	}
	if e.opt.Replay == nil && e.p.interpret(e.inputText()) {
		return
	}
	mode := "submit"
	if e.busy || e.initPhase {
		mode = e.p.busyMode()
	}
	e.accept(mode)
}

// accept takes the input as a submission. A submission is logged when it
// goes to the model (after the hooks that run first, engine.turn); the
// others when taken.
func (e *engine) accept(mode string) {
	text := e.inputText()
	e.setInput("")
	e.fresh = false
	typed := text // the log keeps what was typed
	if mode != "submit" || e.opt.Replay != nil {
		e.logEntry(mode, typed)
	}
	if e.initPhase && mode == "queued" && len(e.queue) == 0 {
		e.addHistory("ℹ Initializing... Prompts will be queued.", "")
	}
	if e.opt.Replay != nil {
		e.replayInput(text)
		return
	}
	text = e.p.trim(text)
	switch mode {
	case "submit":
		e.startTurn([]string{text}, func() { e.logEntry(mode, typed) })
	case "queued":
		e.queue = append(e.queue, text)
	case "steer":
		e.steer(text)
	}
}

func (e *engine) choose(item int) {
	d := e.dialog
	e.dialog = nil
	e.logEntry("dialog", strconv.Itoa(item+1))
	d.choose(item)
}
