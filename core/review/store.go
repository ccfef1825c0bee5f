package review

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

// Files of a review directory (a session's state dir + "/review"); the
// coordinator's lock, its keeper's and its log are a daemon's
// (daemon.LockFile, daemon.KeeperLock, daemon.LogFile).
const (
	StateFile       = "state.json"
	TransitionsFile = "transitions.log"
	DialogueFile    = "dialogue.jsonl"
	signalsDir      = "signals"
	resultsDir      = "results"
)

// Dir is the review directory of a session state dir.
func Dir(stateDir string) string { return filepath.Join(stateDir, "review") }

// ErrNoCoordinator is a review directory without a coordinator's state:
// the session was not started with --review.
var ErrNoCoordinator = errors.New("no review coordinator")

// Load reads the status in dir.
func Load(dir string) (Status, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		return Status{}, fmt.Errorf("%s: %w (start one with 'party coordinator start' or 'party start --review')", dir, ErrNoCoordinator)
	}
	if err != nil {
		return Status{}, err
	}
	var s Status
	if err := json.Unmarshal(b, &s); err != nil {
		return Status{}, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	if s.Evidence == nil {
		s.Evidence = map[Kind]time.Time{}
	}
	return s, nil
}

// Current is the status in dir with the signals still waiting applied, as
// the coordinator will see it once it has taken them: what a new signal or
// a gate is checked against.
func Current(dir string) (Status, error) {
	// The signals first: one the coordinator takes in between is then in
	// the status, and applied() skips it.
	waiting, err := Signals(dir)
	if err != nil {
		return Status{}, err
	}
	s, err := Load(dir)
	if err != nil {
		return s, err
	}
	for _, sig := range waiting {
		if !applied(dir, s, sig.ID) {
			if n, _, err := Admit(dir, s, sig.Event); err == nil {
				s = n
			}
		}
	}
	return s, nil
}

// Admit is Step with the facts that live in files checked too: approve
// needs the findings file of the review in progress.
func Admit(dir string, s Status, ev Event) (Status, []Action, error) {
	if ev.Kind == EvApprove && s.Review != nil && s.Review.Outcome == Valid {
		if path := FindingsPath(dir, s.Review.N); !exists(path) {
			return s, nil, fmt.Errorf("%s in %s: approve needs the findings of review %d, and %s is gone: %w", ev.Kind, s.where(), s.Review.N, path, ErrNoReview)
		}
	}
	return Step(s, ev)
}

// applied says whether signal id was applied already: it is the last one
// the status took (a crash came before its file was removed), or its result
// is written. Ids are times of the senders' clocks, so a signal written
// late may sort before one applied already: order alone proves nothing.
func applied(dir string, s Status, id string) bool {
	return id == s.Signal || hasResult(dir, id)
}

func hasResult(dir, id string) bool { return exists(filepath.Join(dir, resultsDir, id+".json")) }

// ReviewDir is the directory of review n: its diff, prompt, findings and
// message.
func ReviewDir(dir string, n int) string { return filepath.Join(dir, "reviews", strconv.Itoa(n)) }

// FindingsPath is where the reviewer writes the findings of review n.
func FindingsPath(dir string, n int) string { return filepath.Join(ReviewDir(dir, n), "findings.json") }

// exchangeDir is the directory of question n of the review state in dir.
func exchangeDir(dir string, n int) string {
	return filepath.Join(dir, "exchanges", strconv.Itoa(n))
}

// AnswerPath is where the answer to question n of the review state in dir
// is written.
func AnswerPath(dir string, n int) string { return filepath.Join(exchangeDir(dir, n), "answer.md") }

// Save writes s into dir atomically.
func Save(dir string, s Status) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(filepath.Join(dir, StateFile), append(b, '\n'), 0o600)
}

// Signal is one event an agent sent, waiting in the signals directory to
// be applied by the coordinator exactly once.
type Signal struct {
	ID    string `json:"id"`
	Event Event  `json:"event"`
}

// WriteSignal writes ev as a new signal into dir, atomically, and returns
// its id. Ids sort in the order the signals were written.
func WriteSignal(dir string, ev Event) (string, error) {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	id := fmt.Sprintf("%020d-%s", ev.At.UnixNano(), hex.EncodeToString(rnd[:]))
	sd := filepath.Join(dir, signalsDir)
	if err := state.MkdirPrivate(sd); err != nil {
		return "", err
	}
	b, err := json.Marshal(Signal{ID: id, Event: ev})
	if err != nil {
		return "", err
	}
	return id, state.WriteFile(filepath.Join(sd, id+".json"), b, 0o600)
}

// Signals returns the signals waiting in dir, oldest first. A file that is
// not a signal is returned with an empty Event.Kind so that the caller
// reports it rather than losing it silently.
func Signals(dir string) ([]Signal, error) {
	ents, err := os.ReadDir(filepath.Join(dir, signalsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Signal
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			continue
		}
		var s Signal
		b, err := os.ReadFile(filepath.Join(dir, signalsDir, name))
		if err != nil || json.Unmarshal(b, &s) != nil || s.ID != strings.TrimSuffix(name, ".json") {
			s = Signal{ID: strings.TrimSuffix(name, ".json")}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Result is what became of a signal.
type Result struct {
	ID    string `json:"id"`
	State State  `json:"state"`
	Phase Phase  `json:"phase,omitempty"`
	// Error says why the signal was rejected; Code is one of the codes of
	// ErrorCode.
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
}

// consume records the result of signal id and removes the signal.
func consume(dir string, r Result) error {
	rd := filepath.Join(dir, resultsDir)
	if err := state.MkdirPrivate(rd); err != nil {
		return err
	}
	b, _ := json.Marshal(r)
	if err := state.WriteFile(filepath.Join(rd, r.ID+".json"), b, 0o600); err != nil {
		return err
	}
	return discard(dir, r.ID)
}

// discard removes signal id, whose result is recorded already.
func discard(dir, id string) error {
	err := os.Remove(filepath.Join(dir, signalsDir, id+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// ReadResult returns the result of signal id, and false while the signal
// has not been applied yet.
func ReadResult(dir, id string) (Result, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, resultsDir, id+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return Result{}, false, fmt.Errorf("result of signal %s: %w", id, err)
	}
	return r, true, nil
}

// errorCodes name the errors of Step for results, in the order they are
// tested.
var errorCodes = []struct {
	err  error
	code string
}{
	{ErrNoReview, "no-review"},
	{ErrEvidence, "evidence"},
	{ErrForbidden, "forbidden"},
	{ErrBadState, "bad-state"},
	{ErrBadEvent, "bad-event"},
	{ErrIllegal, "illegal"},
}

// ErrorCode names err's kind for a Result.
func ErrorCode(err error) string {
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return "error"
}

// ResultError turns a rejected Result back into an error that wraps the
// sentinel its code names.
func ResultError(r Result) error {
	if r.Error == "" {
		return nil
	}
	for _, c := range errorCodes {
		if c.code == r.Code {
			return &rejected{msg: r.Error, err: c.err}
		}
	}
	return errors.New(r.Error)
}

type rejected struct {
	msg string
	err error
}

func (r *rejected) Error() string { return r.msg }
func (r *rejected) Unwrap() error { return r.err }

// Transition is one line of transitions.log.
type Transition struct {
	Time   time.Time `json:"time"`
	Signal string    `json:"signal,omitempty"`
	Event  EventKind `json:"event"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	Detail string    `json:"detail,omitempty"`
	Error  string    `json:"error,omitempty"`
}

// Submitted is what became of a signal that Submit wrote.
type Submitted struct {
	ID     string
	State  State
	Phase  Phase
	Queued bool // the coordinator did not apply it in time; State is the one before
}

// submitPoll is how often Submit looks for the signal's result.
const submitPoll = 20 * time.Millisecond

// Submit checks ev against the current status of dir (with the signals
// still waiting applied first), writes it as a signal stamped with the
// time, calls wake, and waits up to wait for the coordinator's result. A
// signal the coordinator refused returns its error; one it did not apply
// in time is Queued: it stays, and the coordinator applies it when it runs.
func Submit(ctx context.Context, clk clock.Clock, dir string, ev Event, wait time.Duration, wake func()) (Submitted, error) {
	s, err := Current(dir)
	if err != nil {
		return Submitted{}, err
	}
	ev.At = clk.Now().UTC()
	if _, _, err := Admit(dir, s, ev); err != nil {
		return Submitted{}, err
	}
	id, err := WriteSignal(dir, ev)
	if err != nil {
		return Submitted{}, err
	}
	wake()
	out := Submitted{ID: id}
	deadline := clk.Now().Add(wait)
	for {
		res, ok, err := ReadResult(dir, id)
		if err != nil {
			return out, err
		}
		if ok {
			if err := ResultError(res); err != nil {
				return out, err
			}
			out.State, out.Phase = res.State, res.Phase
			return out, nil
		}
		if !clk.Now().Before(deadline) {
			out.Queued, out.State = true, s.State
			return out, nil
		}
		if err := clk.Sleep(ctx, submitPoll); err != nil {
			return out, err
		}
	}
}
