package record

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Header is the first line of a cast.
type Header struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp"`
	Title     string            `json:"title,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	// Party says which pane the cast is of.
	Party PaneInfo `json:"party"`
}

// PaneInfo identifies the recorded pane.
type PaneInfo struct {
	Pane  string `json:"pane"`
	Role  string `json:"role,omitempty"`
	Agent string `json:"agent,omitempty"`
}

// DefaultRedactions match common API keys and tokens.
var DefaultRedactions = []string{
	`sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}`, // Anthropic, OpenAI
	`AIza[0-9A-Za-z_-]{35}`,              // Google
	`gh[pousr]_[A-Za-z0-9]{36,}`,         // GitHub
	`github_pat_[A-Za-z0-9_]{40,}`,
	`AKIA[0-9A-Z]{16}`,             // AWS access key id
	`xox[abprs]-[A-Za-z0-9-]{10,}`, // Slack
	`(?i)bearer\s+[A-Za-z0-9._~+/-]{20,}=*`,
}

// Redactor replaces secrets with [REDACTED].
type Redactor struct{ res []*regexp.Regexp }

// NewRedactor compiles patterns.
func NewRedactor(patterns []string) (*Redactor, error) {
	r := &Redactor{}
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("redaction pattern %q: %w", p, err)
		}
		r.res = append(r.res, re)
	}
	return r, nil
}

// Redact returns s with every match replaced; a nil Redactor redacts
// nothing.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	for _, re := range r.res {
		s = re.ReplaceAllString(s, "[REDACTED]")
	}
	return s
}

// hold is how many bytes at the end of a chunk are held back until the
// next one (or a line end), so a secret split across chunks is still seen
// whole.
const hold = 128

// Cast writes one pane's cast. It is safe for concurrent use.
type Cast struct {
	mu      sync.Mutex
	w       *bufio.Writer
	start   time.Time
	redact  *Redactor
	pending []byte // held-back output: an incomplete UTF-8 character or a possible secret's start
	last    time.Time
}

// NewCast writes the header and returns the cast. start is time zero of
// its events.
func NewCast(w io.Writer, h Header, start time.Time, r *Redactor) (*Cast, error) {
	h.Version = 2
	if h.Timestamp == 0 {
		h.Timestamp = start.Unix()
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	c := &Cast{w: bufio.NewWriter(w), start: start, redact: r}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	return c, c.w.Flush()
}

// Output records bytes the pane printed at t.
func (c *Cast) Output(t time.Time, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, data...)
	c.last = t
	// Emit up to the last line end, or all but the held-back tail.
	cut := len(c.pending) - hold
	if nl := strings.LastIndexByte(string(c.pending), '\n'); nl+1 > cut {
		cut = nl + 1
	}
	return c.emit(t, "o", cut)
}

// Flush writes out held-back output.
func (c *Cast) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.emit(c.last, "o", len(c.pending)); err != nil {
		return err
	}
	return c.w.Flush()
}

// emit writes the first n pending bytes (backed off to a UTF-8 boundary).
func (c *Cast) emit(t time.Time, kind string, n int) error {
	if n <= 0 {
		return nil
	}
	for n > 0 && n < len(c.pending) && !utf8.RuneStart(c.pending[n]) {
		n--
	}
	text := string(c.pending[:n])
	c.pending = append(c.pending[:0], c.pending[n:]...)
	return c.event(t, kind, text)
}

// Input records text party delivered to the pane at t. The output held
// back goes first: it was printed before (a prompt with no line end).
func (c *Cast) Input(t time.Time, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.emit(c.last, "o", len(c.pending)); err != nil {
		return err
	}
	return c.event(t, "i", text)
}

// Resize records a new pane size, after the output held back.
func (c *Cast) Resize(t time.Time, w, h int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.emit(c.last, "o", len(c.pending)); err != nil {
		return err
	}
	return c.event(t, "r", fmt.Sprintf("%dx%d", w, h))
}

func (c *Cast) event(t time.Time, kind, text string) error {
	if c.redact != nil {
		text = c.redact.Redact(text)
	}
	secs := max(t.Sub(c.start).Seconds(), 0)
	b, err := json.Marshal([]any{float64(int64(secs*1e6)) / 1e6, kind, text})
	if err != nil {
		return err
	}
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return c.w.Flush()
}

// Event is one event of a cast.
type Event struct {
	Time float64
	Kind string
	Data string
}

// Read parses a cast.
func Read(r io.Reader) (Header, []Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var h Header
	if !sc.Scan() {
		return h, nil, fmt.Errorf("empty cast: %w", io.ErrUnexpectedEOF)
	}
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Version != 2 {
		return h, nil, fmt.Errorf("cast header: not asciicast v2")
	}
	var events []Event
	for n := 2; sc.Scan(); n++ {
		var raw []json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil || len(raw) != 3 {
			return h, events, fmt.Errorf("cast line %d: not [time, kind, data]", n)
		}
		var e Event
		if json.Unmarshal(raw[0], &e.Time) != nil || json.Unmarshal(raw[1], &e.Kind) != nil || json.Unmarshal(raw[2], &e.Data) != nil {
			return h, events, fmt.Errorf("cast line %d: bad event", n)
		}
		events = append(events, e)
	}
	return h, events, sc.Err()
}
