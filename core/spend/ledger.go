package spend

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/partyhq/party/core/agent"
	"github.com/partyhq/party/core/hook"
	"github.com/partyhq/party/core/state"
)

// Ledger is a team's ledger of what its agents spent, in Dir (a folder of
// the team's state dir): ledger.db, a SQLite file (ledger_db.go) with
// each response read, once (a response read again counts as its largest
// reading), running sums of them by role, agent, model and quarter hour,
// and how far the event log and each record file were read, all written
// in one transaction.
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

// The files of the ledgers of earlier parties, read into ledger.db once
// (importLegacy) and removed.
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
// since the last scan, and adds the responses found to the ledger, in one
// transaction with how far it read: a crash reads nothing twice. Only
// whole lines are read: a line the agent is writing is read by the next
// scan. Scans of one ledger run one at a time (the write lock is taken
// first).
func (l Ledger) Scan() error {
	db, err := l.open()
	if err != nil {
		return err
	}
	defer db.Close()
	return l.scan(db)
}

// ScanSums scans the ledger (Scan) and returns its Sums since since.
func (l Ledger) ScanSums(since time.Time) ([]Response, error) {
	db, err := l.open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := l.scan(db); err != nil {
		return nil, err
	}
	return l.sums(db, since)
}

func (l Ledger) scan(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return l.fail(err)
	}
	defer tx.Rollback() // after Commit, a no-op
	off, fresh, err := loadOffsets(tx)
	if err != nil {
		return l.fail(err)
	}
	var legacy []Response
	if fresh {
		// A ledger of an earlier party: its responses and offsets move in.
		if legacy, off, err = l.readLegacy(); err != nil {
			return l.fail(err)
		}
	}
	was, err := json.Marshal(off)
	if err != nil {
		return err
	}
	l.learn(&off)
	found := legacy
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
	now, err := json.Marshal(off)
	if err != nil {
		return err
	}
	if !fresh && len(found) == 0 && bytes.Equal(now, was) {
		return nil // nothing read: nothing to write (a commit is a sync)
	}
	if err := addResponses(tx, found); err != nil {
		return l.fail(err)
	}
	if err := saveOffsets(tx, off); err != nil {
		return l.fail(err)
	}
	if err := tx.Commit(); err != nil {
		return l.fail(err)
	}
	if fresh {
		l.removeLegacy()
	}
	return nil
}

// readLegacy reads the ledger an earlier party kept in Dir:
// responses.jsonl (a line cut short, or not JSON, skipped) and
// offsets.json (one that cannot be read: the records are read again from
// their start, and a response read again counts once).
func (l Ledger) readLegacy() ([]Response, offsets, error) {
	off := offsets{Files: map[string]*source{}}
	b, err := os.ReadFile(filepath.Join(l.Dir, offsetsFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, off, err
	}
	if err == nil && json.Unmarshal(b, &off) != nil {
		off = offsets{}
	}
	if off.Files == nil {
		off.Files = map[string]*source{}
	}
	f, err := os.Open(filepath.Join(l.Dir, responsesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, off, nil
	}
	if err != nil {
		return nil, off, err
	}
	defer f.Close()
	var out []Response
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var resp Response
			if json.Unmarshal(line, &resp) == nil {
				out = append(out, resp)
			}
		}
		if err != nil {
			return out, off, nil
		}
	}
}

// removeLegacy removes an earlier party's ledger files once their content
// is in ledger.db; a crash before it reads them in again, and each
// response counts once.
func (l Ledger) removeLegacy() {
	for _, name := range []string{responsesFile, offsetsFile} {
		_ = os.Remove(filepath.Join(l.Dir, name))
	}
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
