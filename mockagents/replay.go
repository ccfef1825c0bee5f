package mockagents

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/partyhq/party/core/record"
	"github.com/partyhq/party/mockagents/mocklog"
)

// Replay plays a recorded cast as an agent: it prints the recorded output
// with the recorded pacing, and at each recorded input waits for a
// submission that matches it before going on.
type Replay struct {
	Events  []record.Event
	Speed   float64 // 1 = recorded pacing
	NoDelay bool
	Exact   bool // compare inputs byte for byte, else loosely
	next    int
	at      float64           // cast time of the last event played
	swap    map[string]string // recorded marker nonce -> this run's
}

// LoadReplay reads a cast for replay.
func LoadReplay(path string) (*Replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	_, events, err := record.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Replay{Events: events, Speed: 1}, nil
}

var (
	spaces      = regexp.MustCompile(`\s+`)
	instruction = regexp.MustCompile(`\(When you have completely finished, end your reply with one line holding the text PARTY_DONE_ immediately followed by ([a-z0-9]+), with nothing between them\.\)`)
)

// loose normalizes an input for loose matching: party's marker
// instruction (whose nonce changes every run) and whitespace differences
// do not count.
func loose(s string) string {
	return strings.TrimSpace(spaces.ReplaceAllString(instruction.ReplaceAllString(s, "(marker)"), " "))
}

// swapped is recorded output with this run's marker nonces.
func (r *Replay) swapped(data string) string {
	for old, now := range r.swap {
		data = strings.ReplaceAll(data, old, now)
	}
	return data
}

func (r *Replay) matches(want, got string) bool {
	if r.Exact {
		return want == got
	}
	return loose(want) == loose(got)
}

// play emits output events until the next input event (or the end).
func (e *engine) play() {
	r := e.opt.Replay
	for r.next < len(r.Events) {
		ev := r.Events[r.next]
		switch ev.Kind {
		case "i":
			return // wait for the matching submission
		case "o":
			if d := time.Duration((ev.Time - r.at) / r.Speed * float64(time.Second)); d > 0 && !r.NoDelay {
				r.at = ev.Time
				e.later(d, e.play)
				return
			}
			r.at = ev.Time
			r.next++
			_, _ = io.WriteString(e.out, r.swapped(ev.Data))
		default:
			r.at = ev.Time
			r.next++
		}
	}
}

// replayInput checks a submission against the recorded input and goes on,
// or reports where the replay diverged.
func (e *engine) replayInput(text string) {
	r := e.opt.Replay
	j := r.next
	for j < len(r.Events) && r.Events[j].Kind != "i" {
		j++
	}
	// party asks for a new marker nonce each run: the recorded answer
	// prints the new one, so a talk --wait replays too.
	if j < len(r.Events) {
		if old, now := instruction.FindStringSubmatch(r.Events[j].Data), instruction.FindStringSubmatch(text); old != nil && now != nil {
			if r.swap == nil {
				r.swap = map[string]string{}
			}
			r.swap[old[1]] = now[1]
		}
	}
	// Input that arrives sooner than the recorded pacing: what the
	// recording printed before that input is printed now.
	for ; r.next < j; r.next++ {
		if ev := r.Events[r.next]; ev.Kind == "o" {
			_, _ = io.WriteString(e.out, r.swapped(ev.Data))
		}
		r.at = r.Events[r.next].Time
	}
	if r.next >= len(r.Events) {
		e.diverged(fmt.Sprintf("replay diverged at event %d: got input %q where the recording has none", r.next+1, text))
		return
	}
	want := r.Events[r.next].Data
	if !r.matches(want, text) {
		e.diverged(fmt.Sprintf("replay diverged at event %d: want input %q, got %q", r.next+1, want, text))
		return
	}
	r.at = r.Events[r.next].Time
	r.next++
	e.play()
}

func (e *engine) diverged(msg string) {
	fmt.Fprintf(os.Stderr, "%s\n", msg)
	_, _ = io.WriteString(e.out, "\r\n"+msg+"\r\n")
	e.seq++
	_ = mocklog.Append(e.opt.LogPath, mocklog.Entry{Agent: e.opt.Persona, Pane: e.opt.Pane, Seq: e.seq, Mode: "diverged", Text: msg, Time: time.Now().UTC()})
}
