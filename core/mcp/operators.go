package mcp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/task"
)

// OperatorsFile is the file of a session's named operator identities, in
// its state dir.
const OperatorsFile = "mcp-operators.json"

var (
	// ErrOperatorExists is an operator name that has a token already
	// (revoke it first).
	ErrOperatorExists = errors.New("an operator of that name exists")
	// ErrNoOperator is an operator name that has no token.
	ErrNoOperator = errors.New("no operator of that name")
)

// Operators are a session's named operator identities (party mcp token):
// an orchestrator outside the team holds the token of one and acts, over
// party mcp, as the operator under that name — the sender of its
// messages, the actor of its task changes — instead of the anonymous
// operator. The file (Path, 0600) keeps each token's SHA-256 only, as the
// session's record keeps the runtimes'; Root is party's state root, for
// the file's lock.
type Operators struct {
	Path, Root string
	// Reserved are names an operator may not take: the session's roles
	// (a message from it would pass for the agent's).
	Reserved []string
}

// Operator is a named operator identity.
type Operator struct {
	Name    string    `json:"name"`
	Hash    string    `json:"sha256"` // of its token, in hex
	Created time.Time `json:"created"`
}

// Add makes a token for the operator name and records its hash; the
// token is returned once, never kept.
func (o Operators) Add(name string, now time.Time) (string, error) {
	if err := task.CheckRole("operator name", name); err != nil {
		return "", err
	}
	if slices.Contains(o.Reserved, name) || name == "operator" || name == task.HumanActor {
		return "", fmt.Errorf("operator name %q: a role of the session, or a name party gives the anonymous operator: %w", name, errUsage)
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := "pmo_" + hex.EncodeToString(b)
	err := o.edit(func(ops []Operator) ([]Operator, error) {
		if slices.ContainsFunc(ops, func(op Operator) bool { return op.Name == name }) {
			return nil, fmt.Errorf("operator %s: %w (party mcp token revoke %s)", name, ErrOperatorExists, name)
		}
		return append(ops, Operator{Name: name, Hash: state.HashToken(token), Created: now.UTC()}), nil
	})
	return token, err
}

// Revoke takes the operator name's token out: it is refused from then on.
func (o Operators) Revoke(name string) error {
	return o.edit(func(ops []Operator) ([]Operator, error) {
		i := slices.IndexFunc(ops, func(op Operator) bool { return op.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("operator %s: %w", name, ErrNoOperator)
		}
		return slices.Delete(ops, i, i+1), nil
	})
}

// List is the named operators, by name.
func (o Operators) List() ([]Operator, error) {
	b, err := os.ReadFile(o.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ops []Operator
	if err := json.Unmarshal(b, &ops); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Path, err)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Name < ops[j].Name })
	return ops, nil
}

// Lookup is the name of the operator whose token token is.
func (o Operators) Lookup(token string) (string, bool, error) {
	ops, err := o.List()
	if err != nil {
		return "", false, err
	}
	h := state.HashToken(token)
	for _, op := range ops {
		if state.SameToken(h, op.Hash) {
			return op.Name, true, nil
		}
	}
	return "", false, nil
}

// edit changes the list under the file's lock and writes it (0600).
func (o Operators) edit(f func([]Operator) ([]Operator, error)) error {
	unlock, err := state.LockFile(o.Root, o.Path)
	if err != nil {
		return err
	}
	defer unlock()
	ops, err := o.List()
	if err != nil {
		return err
	}
	if ops, err = f(ops); err != nil {
		return err
	}
	if ops == nil {
		ops = []Operator{}
	}
	b, err := json.MarshalIndent(ops, "", "  ")
	if err != nil {
		return err
	}
	return state.WriteFile(o.Path, append(b, '\n'), 0o600)
}
