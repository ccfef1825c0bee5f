package spend

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/state"
)

// Ledger is a team's ledger of what its agents spent, in Dir (a folder of
// the team's state dir): responses.jsonl holds each response read, once
// or, when a record was read again, more than once (Responses keeps one);
// offsets.json how far the event log and each record file were read.
type Ledger struct {
	Dir string
	// Events is the team's event log, where the agents name their
	// sessions and record files; CodexHome is where Codex keeps its
	// rollouts, which its events do not name.
	Events    string
	CodexHome string
	// Roles names the role of a pane, for events logged before events
	// carried their role.
	Roles map[string]string
}

// TeamLedger is the ledger of the team whose state dir is stateDir: in
// its spend folder, learning from its event log; roles names the role of
// each pane id.
func TeamLedger(stateDir, codexHome string, roles map[string]string) Ledger {
	return Ledger{Dir: filepath.Join(stateDir, "spend"), Events: filepath.Join(stateDir, state.EventLog),
		CodexHome: codexHome, Roles: roles}
}

// The ledger's files.
const (
	responsesFile = "responses.jsonl"
	offsetsFile   = "offsets.json"
)

// offsets is how far the ledger read.
type offsets struct {
	Events int64              `json:"events"`
	Files  map[string]*source `json:"files"`
	// Pending are Codex threads whose rollout was not found yet.
	Pending []pendingThread `json:"pending,omitempty"`
}

// source is one record file of an agent, and how far it was read.
type source struct {
	Role   string `json:"role"`
	Offset int64  `json:"offset"`
	// Head is a hash of the file's first bytes when it was first read: a
	// file that no longer starts so was rewritten, and is read again.
	Head string `json:"head"`
	File
}

type pendingThread struct {
	Role, Thread string
}

// headBytes is how much of a file's start Head hashes.
const headBytes = 256

// Scan reads what was added to the event log and to each record file
// since the last scan, and appends the responses found. Only whole lines
// are read: a line the agent is writing is read by the next scan.
func (l Ledger) Scan() error {
	if err := state.MkdirPrivate(l.Dir); err != nil {
		return err
	}
	off, err := l.readOffsets()
	if err != nil {
		return err
	}
	was, err := json.Marshal(off)
	if err != nil {
		return err
	}
	l.learn(&off)
	var found []Response
	paths := make([]string, 0, len(off.Files))
	for p := range off.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		rs, err := readSource(p, off.Files[p])
		if err != nil {
			return err
		}
		found = append(found, rs...)
	}
	if err := l.append(found); err != nil {
		return err
	}
	b, err := json.Marshal(off)
	if err != nil || bytes.Equal(b, was) {
		return err // nothing read: nothing to save (a write is a sync)
	}
	// After the responses: a crash between the two reads them again, and
	// Responses keeps one of each.
	return state.WriteFile(filepath.Join(l.Dir, offsetsFile), b, 0o600)
}

func (l Ledger) readOffsets() (offsets, error) {
	off := offsets{Files: map[string]*source{}}
	b, err := os.ReadFile(filepath.Join(l.Dir, offsetsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return off, nil
	}
	if err != nil {
		return off, err
	}
	if err := json.Unmarshal(b, &off); err != nil {
		// A ledger that cannot be read is read again from the start.
		return offsets{Files: map[string]*source{}}, nil
	}
	if off.Files == nil {
		off.Files = map[string]*source{}
	}
	return off, nil
}

// learn reads the event log from where it was left for the record files
// the agents name: Claude's and Gemini's transcript_path, Codex's thread
// (its rollout found under CodexHome).
func (l Ledger) learn(off *offsets) {
	f, err := os.Open(l.Events)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() < off.Events {
		off.Events = 0 // a new log
	}
	if _, err := f.Seek(off.Events, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // a partial last line waits for the next scan
		}
		off.Events += int64(len(line))
		var ev hook.Event
		if json.Unmarshal(line, &ev) != nil || ev.Session == "" {
			continue
		}
		role := ev.Role
		if role == "" {
			role = l.Roles[ev.Pane]
		}
		switch kind := agent.Kind(ev.Agent); {
		case kind == agent.Codex:
			if !containsThread(off.Pending, role, ev.Session) && !hasSession(off.Files, agent.Codex, ev.Session) {
				off.Pending = append(off.Pending, pendingThread{Role: role, Thread: ev.Session})
			}
		case (kind == agent.Claude || kind == agent.Gemini) && ev.Transcript != "":
			if _, ok := off.Files[ev.Transcript]; !ok {
				off.Files[ev.Transcript] = &source{Role: role, File: File{Agent: kind}}
			}
		}
	}
	var still []pendingThread
	for _, p := range off.Pending {
		if path := agent.CodexRollout(l.CodexHome, p.Thread); path != "" {
			if _, ok := off.Files[path]; !ok {
				off.Files[path] = &source{Role: p.Role, File: File{Agent: agent.Codex, Session: p.Thread}}
			}
			continue
		}
		still = append(still, p)
	}
	off.Pending = still
}

func containsThread(ps []pendingThread, role, thread string) bool {
	for _, p := range ps {
		if p.Role == role && p.Thread == thread {
			return true
		}
	}
	return false
}

func hasSession(files map[string]*source, kind agent.Kind, session string) bool {
	for _, s := range files {
		if s.Agent == kind && s.Session == session {
			return true
		}
	}
	return false
}

// readSource reads src's file from its offset, and from the start when
// the file was rewritten (shorter, or no longer starting the same).
func readSource(path string, src *source) ([]Response, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // removed: what was read stays in the ledger
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	head := make([]byte, min(headBytes, st.Size()))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	sum := sha256.Sum256(head)
	h := hex.EncodeToString(sum[:8])
	if st.Size() < src.Offset || (src.Offset > 0 && src.Offset >= int64(len(head)) && src.Head != h) {
		src.Offset, src.File = 0, File{Agent: src.Agent, Session: src.Session}
	}
	if src.Offset < int64(len(head)) || src.Head == "" {
		src.Head = h
	}
	if _, err := f.Seek(src.Offset, io.SeekStart); err != nil {
		return nil, err
	}
	var out []Response
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		src.Offset += int64(len(line))
		if resp, ok := src.Parse(bytes.TrimSpace(line)); ok {
			resp.Role = src.Role
			out = append(out, resp)
		}
	}
	return out, nil
}

// append adds rs to responses.jsonl.
func (l Ledger) append(rs []Response) error {
	if len(rs) == 0 {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(filepath.Join(l.Dir, responsesFile), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	// A write cut short (a full disk, a crash) left half a line: end it,
	// so the next line is read whole.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			b = *bytes.NewBuffer(append([]byte{'\n'}, b.Bytes()...))
		}
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Responses are the responses of the ledger, each once: a response read
// more than once (a record read again, Claude's repeated entries of one
// message) counts as its largest reading.
func (l Ledger) Responses() ([]Response, error) {
	f, err := os.Open(filepath.Join(l.Dir, responsesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type key struct {
		agent       agent.Kind
		session, id string
	}
	keyOf := func(r Response) key {
		if r.Agent == agent.Claude {
			// A message id is Claude's alone: a forked or copied session
			// repeats its messages under another session id.
			return key{agent: r.Agent, id: r.ID}
		}
		return key{r.Agent, r.Session, r.ID}
	}
	at := map[key]int{}
	var out []Response
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		var resp Response
		if json.Unmarshal(line, &resp) != nil {
			continue
		}
		k := keyOf(resp)
		if i, ok := at[k]; ok {
			if resp.Total() > out[i].Total() {
				out[i] = resp
			}
			continue
		}
		at[k] = len(out)
		out = append(out, resp)
	}
	return out, nil
}
