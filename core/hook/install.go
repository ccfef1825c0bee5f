package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/partyhq/party/core/jsonpos"
	"github.com/partyhq/party/core/shellwords"
)

// ErrSettings is an agent's settings document (Claude Code's, Gemini CLI's)
// that cannot be merged.
var ErrSettings = errors.New("invalid settings")

// ErrSettingsFile is a settings file that party will not write in place.
var ErrSettingsFile = errors.New("settings file cannot be written")

// CheckSettingsFile says whether the settings file at path can be replaced
// in place: a missing file can be made; a symlink must lead to a file (a
// dangling link is refused, not replaced by a file); the file must be
// writable (its mode allows it, even for root, and access(2) agrees) and
// so must its directory (the new content is renamed into place).
func CheckSettingsFile(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	target := path
	if fi.Mode()&fs.ModeSymlink != 0 {
		link, _ := os.Readlink(path)
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return fmt.Errorf("%s is a symlink to %s, which does not exist; fix or remove the link: %w", path, link, ErrSettingsFile)
		}
		if fi, err = os.Stat(target); err != nil {
			return err
		}
	}
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file: %w", target, ErrSettingsFile)
	case fi.Mode().Perm()&0o200 == 0 || unix.Access(target, unix.W_OK) != nil:
		return fmt.Errorf("%s is read-only (mode %04o); make it writable (chmod u+w) to install the hooks: %w", target, fi.Mode().Perm(), ErrSettingsFile)
	case unix.Access(filepath.Dir(target), unix.W_OK) != nil:
		return fmt.Errorf("the directory of %s is not writable: %w", target, ErrSettingsFile)
	}
	return nil
}

// claudeEntry is one hook party installs in a Claude Code settings file.
type claudeEntry struct {
	event   string
	matcher string // "" means no matcher key
}

// claudeEntries are the hooks party installs: the Bash gate, the trace log
// of every tool use, and the session start.
var claudeEntries = []claudeEntry{
	{event: "PreToolUse", matcher: "Bash"},
	{event: "PostToolUse", matcher: "*"},
	{event: "SessionStart"},
}

// MergeClaudeSettings merges party's hooks, each running command, into the
// Claude Code settings document existing (empty means a new document). Every
// other key and every hook of the user is kept, in order. A hook that is
// party's (see IsPartyCommand) is updated in place, so merging twice leaves
// one copy and reports changed false the second time. merged is indented
// with two spaces and ends with a newline; it is the input, normalized, when
// changed is false. An existing document that is not valid JSON, or whose
// hooks do not have Claude's shape, is an error wrapping ErrSettings.
func MergeClaudeSettings(existing []byte, command string) (merged []byte, changed bool, err error) {
	return mergeSettings(existing, claudeEntries, command, func(c string) bool { return IsPartyCommand(c, command) }, nil)
}

// mergeSettings merges a hook running command for each of entries into the
// settings document existing; see MergeClaudeSettings.
func mergeSettings(existing []byte, entries []claudeEntry, command string, isParty func(string) bool, extra object) (merged []byte, changed bool, err error) {
	doc := object{}
	if len(bytes.TrimSpace(existing)) > 0 {
		if err := validJSON(existing); err != nil {
			return nil, false, err
		}
		if doc, err = parseObject(existing); err != nil {
			return nil, false, fmt.Errorf("top level: %w", err)
		}
	} else {
		changed = true
	}
	hooks := object{}
	if raw, ok := doc.get("hooks"); ok && !isNull(raw) {
		if hooks, err = parseObject(raw); err != nil {
			return nil, false, fmt.Errorf("hooks: %w", err)
		}
	}
	hooksChanged := false
	for _, e := range entries {
		var groups []json.RawMessage
		if raw, ok := hooks.get(e.event); ok && !isNull(raw) {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, false, fmt.Errorf("hooks.%s: want an array: %w", e.event, ErrSettings)
			}
		}
		out, ch, err := mergeEvent(groups, e, command, isParty, extra)
		if err != nil {
			return nil, false, err
		}
		if ch {
			hooks.set(e.event, marshalArray(out))
			hooksChanged = true
		}
	}
	if hooksChanged {
		doc.set("hooks", hooks.marshal())
		changed = true
	}
	out, err := doc.indented()
	return out, changed, err
}

// indented is doc as party writes a settings file: indented by two
// spaces, ending with a newline.
func (o object) indented() ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, o.marshal(), "", "  "); err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrSettings)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// mergeEvent puts one hook running command in the matcher groups of one
// event: the first party hook (isParty) in a group with e's matcher is
// updated in place, every other party hook is removed (with its group when
// nothing else is left in it), and a new group is appended when there was
// none; a new hook gets the members extra after type and command.
func mergeEvent(groups []json.RawMessage, e claudeEntry, command string, isParty func(string) bool, extra object) ([]json.RawMessage, bool, error) {
	out := make([]json.RawMessage, 0, len(groups)+1)
	placed, changed := false, false
	for i, g := range groups {
		at := fmt.Sprintf("hooks.%s[%d]", e.event, i)
		obj, err := parseObject(g)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", at, err)
		}
		var hs []json.RawMessage
		if raw, ok := obj.get("hooks"); ok && !isNull(raw) {
			if err := json.Unmarshal(raw, &hs); err != nil {
				return nil, false, fmt.Errorf("%s.hooks: want an array: %w", at, ErrSettings)
			}
		}
		matcher := obj.str("matcher")
		kept := make([]json.RawMessage, 0, len(hs))
		groupChanged := false
		for _, h := range hs {
			ho, err := parseObject(h)
			if err != nil || !isParty(ho.str("command")) {
				kept = append(kept, h) // the user's, whatever it is
				continue
			}
			if placed || matcher != e.matcher {
				groupChanged = true // a duplicate, or under another matcher
				continue
			}
			placed = true
			if ho.str("type") == "command" && ho.str("command") == command {
				kept = append(kept, h)
				continue
			}
			ho.set("type", jsonString("command"))
			ho.set("command", jsonString(command))
			kept = append(kept, ho.marshal())
			groupChanged = true
		}
		if !groupChanged {
			out = append(out, g)
			continue
		}
		changed = true
		if len(kept) == 0 {
			continue // the group held only party's hooks
		}
		obj.set("hooks", marshalArray(kept))
		out = append(out, obj.marshal())
	}
	if !placed {
		g := object{}
		if e.matcher != "" {
			g.set("matcher", jsonString(e.matcher))
		}
		h := object{}
		h.set("type", jsonString("command"))
		h.set("command", jsonString(command))
		for _, m := range extra {
			h.set(m.key, m.value)
		}
		g.set("hooks", marshalArray([]json.RawMessage{h.marshal()}))
		out = append(out, g.marshal())
		changed = true
	}
	return out, changed, nil
}

// IsPartyCommand reports whether the hook command cmd is party's: command
// itself, or any command whose first word names a program called "party"
// and whose other words are exactly "hook claude".
func IsPartyCommand(cmd, command string) bool {
	return isPartyHook(cmd, command, "claude")
}

// isPartyHook reports whether the hook command cmd is command, or names a
// program called "party" with the words "hook AGENT".
func isPartyHook(cmd, command, agent string) bool {
	if cmd == command {
		return true
	}
	w, err := shellwords.SplitCommand(cmd)
	return err == nil && len(w) == 3 && path.Base(w[0]) == "party" && w[1] == "hook" && w[2] == agent
}

// validJSON checks that b is one JSON value and says where it is not.
func validJSON(b []byte) error {
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := jsonpos.LineCol(b, se.Offset)
		return fmt.Errorf("line %d, column %d: %v: %w", line, col, se, ErrSettings)
	}
	if err != nil {
		return fmt.Errorf("%v: %w", err, ErrSettings)
	}
	return nil
}

// object is a JSON object that keeps its members in order and their values
// as they were written, so fields party does not know survive a merge.
type object []member

type member struct {
	key   string
	value json.RawMessage
}

// parseObject reads a JSON object; anything else is an error wrapping
// ErrSettings.
func parseObject(raw []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("want an object: %w", ErrSettings)
	}
	o := object{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%v: %w", err, ErrSettings)
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%q: %v: %w", key, err, ErrSettings)
		}
		o = append(o, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrSettings)
	}
	return o, nil
}

// get returns the value of key; with duplicate keys the last one counts,
// as in encoding/json.
func (o object) get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].value, true
		}
	}
	return nil, false
}

// str returns the value of key when it is a string, else "".
func (o object) str(key string) string {
	raw, _ := o.get(key)
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// del removes every member named key.
func (o *object) del(key string) {
	kept := (*o)[:0]
	for _, m := range *o {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	*o = kept
}

// set replaces the value of key in place, or appends key.
func (o *object) set(key string, v json.RawMessage) {
	for i := len(*o) - 1; i >= 0; i-- {
		if (*o)[i].key == key {
			(*o)[i].value = v
			return
		}
	}
	*o = append(*o, member{key, v})
}

// marshal encodes o compactly, its values as they are.
func (o object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(m.key))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func marshalArray(vs []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// jsonString encodes s as a JSON string without HTML escaping, so commands
// with & < > stay readable.
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}
