package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/state"
)

// ErrNoTask is a retry of a task that has no saved step.
var ErrNoTask = errors.New("no aborted relay task")

// NoTaskError is a retry of a task whose step is not in Dir; an empty ID
// is a retry of the latest when there is none.
type NoTaskError struct{ ID, Dir string }

func (e *NoTaskError) Error() string {
	if e.ID == "" {
		return "no aborted relay task to retry"
	}
	return fmt.Sprintf("no aborted task %q in %s", e.ID, e.Dir)
}

func (e *NoTaskError) Unwrap() error { return ErrNoTask }

// Latest is the id that retries the task aborted last.
const Latest = "last"

// Steps keeps the step each running task is at, as ID.json in Dir, so
// that an aborted task can be retried from its last step.
type Steps struct{ Dir string }

// Save writes the step of s.Task.
func (st Steps) Save(s Step) error {
	if err := state.MkdirPrivate(st.Dir); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(st.path(s.Task.ID), append(b, '\n'), 0o600)
}

// Retriable says whether task id, stopped by err, can be retried: a
// stall or an interrupt stopped it and its last step is saved.
func (st Steps) Retriable(id string, err error) bool {
	var stall *StallError
	if !errors.As(err, &stall) && !errors.Is(err, context.Canceled) {
		return false
	}
	_, lost := st.Load(id)
	return lost == nil
}

// Load reads the step of task id; Latest is the task saved last.
func (st Steps) Load(id string) (Step, error) {
	var s Step
	if id == Latest {
		var err error
		if id, err = st.latest(); err != nil {
			return s, err
		}
	}
	b, err := os.ReadFile(st.path(id))
	if err != nil {
		return s, &NoTaskError{ID: id, Dir: st.Dir}
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("task %s: %w", id, err)
	}
	return s, nil
}

// Remove forgets the step of a task that is done.
func (st Steps) Remove(id string) { _ = os.Remove(st.path(id)) }

func (st Steps) path(id string) string { return filepath.Join(st.Dir, filepath.Base(id)+".json") }

// latest is the id of the task whose step was saved last.
func (st Steps) latest() (string, error) {
	entries, err := os.ReadDir(st.Dir)
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	var id string
	var newest time.Time
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || filepath.Ext(e.Name()) != ".json" {
			continue
		}
		if info.ModTime().After(newest) {
			id, newest = strings.TrimSuffix(e.Name(), ".json"), info.ModTime()
		}
	}
	if id == "" {
		return "", &NoTaskError{}
	}
	return id, nil
}

// PrimedPanes are Panes that teach each role once how to write blocks
// (*MuxPanes).
type PrimedPanes interface {
	Panes
	Prime(ctx context.Context, t Task) error
}

// Job relays tasks on a session's panes (party relay): it primes the
// roles, saves each step into Steps and forgets it when the task is done.
type Job struct {
	Panes PrimedPanes
	Log   Log
	Steps Steps
}

// SessionJob is the Job of the party session whose state dir is
// stateDir: blocks and decisions go to its event log as relay.KIND
// events, steps to relay/ in it.
func SessionJob(panes PrimedPanes, clk clock.Clock, stateDir string) *Job {
	events := filepath.Join(stateDir, state.EventLog)
	return &Job{Panes: panes, Steps: Steps{Dir: filepath.Join(stateDir, "relay")},
		Log: func(kind string, fields map[string]any) {
			fields["kind"], fields["time"] = "relay."+kind, clk.Now().UTC()
			_ = state.AppendEvent(events, fields)
		}}
}

// Run relays t from the start and returns the planner's report.
func (j *Job) Run(ctx context.Context, t Task) (string, error) {
	return j.from(ctx, Step{}, t)
}

// Retry re-sends the last step of the aborted task id (Latest: the task
// aborted last) and continues; it returns the task and its report.
func (j *Job) Retry(ctx context.Context, id string) (Task, string, error) {
	s, err := j.Steps.Load(id)
	if err != nil {
		return Task{}, "", err
	}
	report, err := j.from(ctx, s, s.Task)
	return s.Task, report, err
}

func (j *Job) from(ctx context.Context, s Step, t Task) (string, error) {
	if err := j.Panes.Prime(ctx, t); err != nil {
		var refused *deliver.NotAgentError
		if errors.As(err, &refused) && j.Log != nil {
			j.Log("refused-"+refused.Why, map[string]any{"task": t.ID, "pane": refused.Pane, "agent": string(refused.Kind), "error": err.Error()})
		}
		return "", err
	}
	r := &Relay{Panes: j.Panes, Log: j.Log, Save: j.Steps.Save}
	var report string
	var err error
	if s.Task.ID == "" {
		report, err = r.Run(ctx, t)
	} else {
		report, err = r.Resume(ctx, s)
	}
	if err != nil {
		return "", err
	}
	j.Steps.Remove(t.ID)
	return report, nil
}
