package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// GeminiMCPServerName is the name of party's MCP server in Gemini's
// settings (mcpServers.party): Gemini offers its tools to the model as
// mcp_party_TOOL.
const GeminiMCPServerName = "party"

// GeminiMCP is party's MCP server as a folder's Gemini settings hold it.
type GeminiMCP struct {
	// Command and Args start the server (party's executable, "mcp").
	Command string
	Args    []string
	// Trust lets Gemini run the server's tools without a confirmation
	// (trust: true; Gemini honours it in a trusted folder only).
	Trust bool
	// Allow are the variables of the pane the server needs: Gemini gives a
	// stdio MCP server its environment with the secret-looking names
	// (TOKEN, KEY, …) taken out, unless security.environmentVariableRedaction.allowed
	// names them.
	Allow []string
}

// GeminiMCPAdded is what MergeGeminiMCP added to a settings document,
// so that RemoveGeminiMCP takes out exactly that.
type GeminiMCPAdded struct {
	// Server: mcpServers.party is party's, with this Command.
	Server  bool   `json:"server,omitempty"`
	Command string `json:"command,omitempty"`
	// Allowed are the names party added to
	// security.environmentVariableRedaction.allowed.
	Allowed []string `json:"allowed,omitempty"`
	// Made are the objects and arrays party made to hold them
	// ("mcpServers", "security", "security.environmentVariableRedaction",
	// "security.environmentVariableRedaction.allowed"): removed again
	// once empty.
	Made []string `json:"made,omitempty"`
	// Conflict is the command of a server named party that is the user's
	// own: party added nothing.
	Conflict string `json:"conflict,omitempty"`
}

// The keys of Gemini's allow-list, one level each.
const (
	keySecurity  = "security"
	keyRedaction = "environmentVariableRedaction"
	keyAllowed   = "allowed"
	keyServers   = "mcpServers"
)

// Paths of the containers in GeminiMCPAdded.Made.
const (
	madeServers   = keyServers
	madeSecurity  = keySecurity
	madeRedaction = keySecurity + "." + keyRedaction
	madeAllowed   = madeRedaction + "." + keyAllowed
)

// MergeGeminiMCP adds party's MCP server s to the Gemini settings document
// existing: mcpServers.party (command, args, trust unless prompting) and
// the names of s.Allow that security.environmentVariableRedaction.allowed
// lacks, appended. Every other key, server and allowed name is kept in
// order. prev is what an earlier merge of the same session added (a
// restart after a crash): what it added is still party's. A server named
// party that is not party's is left alone, and then nothing is added
// (added.Conflict says its command): the user's server is not given the
// pane's token. Merging twice reports changed false. A document with
// comments, or whose keys do not have Gemini's shape, is an error
// wrapping ErrSettings.
func MergeGeminiMCP(existing []byte, s GeminiMCP, prev GeminiMCPAdded) (merged []byte, added GeminiMCPAdded, changed bool, err error) {
	if err := noComments(existing); err != nil {
		return nil, added, false, err
	}
	doc := object{}
	if len(bytes.TrimSpace(existing)) > 0 {
		if err := validJSON(existing); err != nil {
			return nil, added, false, err
		}
		if doc, err = parseObject(existing); err != nil {
			return nil, added, false, fmt.Errorf("top level: %w", err)
		}
	} else {
		changed = true
	}
	made := func(path string, had bool) {
		if !had || slices.Contains(prev.Made, path) {
			added.Made = append(added.Made, path)
		}
	}

	servers, had, err := child(doc, keyServers, keyServers)
	if err != nil {
		return nil, added, false, err
	}
	server := object{{"command", jsonString(s.Command)}, {"args", stringsJSON(s.Args)}}
	if s.Trust {
		server.set("trust", json.RawMessage("true"))
	}
	if raw, ok := servers.get(GeminiMCPServerName); ok && !isNull(raw) {
		cur, err := parseObject(raw)
		if err != nil {
			return nil, added, false, fmt.Errorf("%s.%s: %w", keyServers, GeminiMCPServerName, err)
		}
		ours := prev.Server && cur.str("command") == prev.Command
		args, _ := cur.get("args")
		same := cur.str("command") == s.Command && jsonEqual(args, stringsJSON(s.Args))
		switch {
		case ours:
			added.Server, added.Command = true, s.Command
			if !jsonEqual(raw, server.marshal()) {
				servers.set(GeminiMCPServerName, server.marshal())
				changed = true
			}
		case !same:
			// The user's own: nothing of party's goes in.
			return normalized(existing, doc, changed, GeminiMCPAdded{Conflict: cur.str("command")})
		}
		// The user's own party mcp: kept as it is, given the variables.
	} else {
		servers.set(GeminiMCPServerName, server.marshal())
		added.Server, added.Command, changed = true, s.Command, true
	}
	if added.Server {
		made(madeServers, had)
		doc.set(keyServers, servers.marshal())
	}

	security, hadSec, err := child(doc, keySecurity, keySecurity)
	if err != nil {
		return nil, added, false, err
	}
	redaction, hadRed, err := child(security, keyRedaction, madeRedaction)
	if err != nil {
		return nil, added, false, err
	}
	var allowed []json.RawMessage
	hadAllowed := false
	if raw, ok := redaction.get(keyAllowed); ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &allowed); err != nil {
			return nil, added, false, fmt.Errorf("%s: want an array: %w", madeAllowed, ErrSettings)
		}
		hadAllowed = true
	}
	allowedChanged := false
	for _, name := range s.Allow {
		i := slices.IndexFunc(allowed, func(v json.RawMessage) bool { return stringIs(v, name) })
		switch {
		case i < 0:
			allowed = append(allowed, jsonString(name))
			added.Allowed = append(added.Allowed, name)
			allowedChanged = true
		case slices.Contains(prev.Allowed, name):
			added.Allowed = append(added.Allowed, name) // party's, from before
		}
	}
	if len(added.Allowed) > 0 {
		made(madeSecurity, hadSec)
		made(madeRedaction, hadRed)
		made(madeAllowed, hadAllowed)
	}
	if allowedChanged {
		redaction.set(keyAllowed, marshalArray(allowed))
		security.set(keyRedaction, redaction.marshal())
		doc.set(keySecurity, security.marshal())
		changed = true
	}
	return normalized(existing, doc, changed, added)
}

// RemoveGeminiMCP takes what MergeGeminiMCP added (added) out of the
// Gemini settings document existing: party's server (while it still runs
// added.Command), the allowed names party added, and the objects party
// made that are left empty. empty reports that nothing but an empty
// object is left.
func RemoveGeminiMCP(existing []byte, added GeminiMCPAdded) (out []byte, changed, empty bool, err error) {
	doc, err := settingsToEdit(existing)
	if err != nil {
		return nil, false, false, err
	}
	if doc == nil {
		return existing, false, true, nil
	}
	made := func(path string) bool { return slices.Contains(added.Made, path) }

	if added.Server {
		servers, had, err := child(doc, keyServers, keyServers)
		if err != nil {
			return nil, false, false, err
		}
		if raw, ok := servers.get(GeminiMCPServerName); ok && had {
			if cur, err := parseObject(raw); err == nil && cur.str("command") == added.Command {
				servers.del(GeminiMCPServerName)
				changed = true
				if len(servers) == 0 && made(madeServers) {
					doc.del(keyServers)
				} else {
					doc.set(keyServers, servers.marshal())
				}
			}
		}
	}

	if len(added.Allowed) > 0 {
		security, hadSec, err := child(doc, keySecurity, keySecurity)
		if err != nil {
			return nil, false, false, err
		}
		redaction, hadRed, err := child(security, keyRedaction, madeRedaction)
		if err != nil {
			return nil, false, false, err
		}
		var allowed []json.RawMessage
		if raw, ok := redaction.get(keyAllowed); ok && !isNull(raw) && hadSec && hadRed {
			if err := json.Unmarshal(raw, &allowed); err != nil {
				return nil, false, false, fmt.Errorf("%s: want an array: %w", madeAllowed, ErrSettings)
			}
		}
		n := len(allowed)
		for _, name := range added.Allowed {
			if i := slices.IndexFunc(allowed, func(v json.RawMessage) bool { return stringIs(v, name) }); i >= 0 {
				allowed = slices.Delete(allowed, i, i+1)
			}
		}
		if len(allowed) < n {
			changed = true
			if len(allowed) == 0 && made(madeAllowed) {
				redaction.del(keyAllowed)
			} else {
				redaction.set(keyAllowed, marshalArray(allowed))
			}
			if len(redaction) == 0 && made(madeRedaction) {
				security.del(keyRedaction)
			} else {
				security.set(keyRedaction, redaction.marshal())
			}
			if len(security) == 0 && made(madeSecurity) {
				doc.del(keySecurity)
			} else {
				doc.set(keySecurity, security.marshal())
			}
		}
	}
	if !changed {
		return existing, false, len(doc) == 0, nil
	}
	out, err = doc.indented()
	return out, err == nil, len(doc) == 0, err
}

// child is the object under key in o: an empty one when there is none
// (had false). at names it in an error.
func child(o object, key, at string) (c object, had bool, err error) {
	raw, ok := o.get(key)
	if !ok || isNull(raw) {
		return object{}, false, nil
	}
	if c, err = parseObject(raw); err != nil {
		return nil, false, fmt.Errorf("%s: %w", at, err)
	}
	return c, true, nil
}

// normalized is doc indented as party writes settings, when changed;
// else existing as it was.
func normalized(existing []byte, doc object, changed bool, added GeminiMCPAdded) ([]byte, GeminiMCPAdded, bool, error) {
	if !changed {
		return existing, added, false, nil
	}
	out, err := doc.indented()
	if err != nil {
		return nil, added, false, err
	}
	return out, added, true, nil
}

// stringIs reports whether the JSON value v is the string s.
func stringIs(v json.RawMessage, s string) bool {
	var got string
	return json.Unmarshal(v, &got) == nil && got == s
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// stringsJSON is v as a JSON array (nil: []).
func stringsJSON(v []string) json.RawMessage {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return b
}
