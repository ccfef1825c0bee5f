package task

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/state"
)

// PointerFile is the file, relative to a linked directory, that names the
// directory's team. It holds only {"id": "<uuid>"}.
const PointerFile = ".party/team.json"

// pointer is the content of PointerFile.
type pointer struct {
	ID string `json:"id"`
}

// NewTeamID returns a random UUID (version 4).
func NewTeamID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("team id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Link is a directory's link to its team.
type Link struct {
	// Dir is the linked directory (where .party/team.json is).
	Dir string
	// Path is the pointer file.
	Path string
	// ID is the team's id.
	ID string
}

// FindLink looks for the pointer file in dir and its parents, as git
// looks for .git. None is ErrNoTeam; a pointer that does not parse or
// holds no UUID is ErrCorrupt.
func FindLink(dir string) (Link, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Link{}, err
	}
	for d := dir; ; d = filepath.Dir(d) {
		path := filepath.Join(d, PointerFile)
		id, err := readPointer(path)
		if err == nil {
			return Link{Dir: d, Path: path, ID: id}, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return Link{}, err
		}
		if filepath.Dir(d) == d {
			return Link{}, fmt.Errorf("%s is not linked to a team (no %s here or above; run party pm init): %w", dir, PointerFile, ErrNoTeam)
		}
	}
}

func readPointer(path string) (string, error) {
	var p pointer
	if err := readJSON(path, &p); err != nil {
		return "", err
	}
	if !uuidRE.MatchString(p.ID) {
		return "", fmt.Errorf("%s: id %q is not a team id: %w", path, p.ID, ErrCorrupt)
	}
	return p.ID, nil
}

// InitOptions are the inputs of Init.
type InitOptions struct {
	Root  string // party's state root
	Dir   string // the directory to link
	Name  string // the new team's name
	Team  string // link to this existing team instead of making one
	Actor string
	Clock clock.Clock
}

// InitResult is what Init did.
type InitResult struct {
	Team    Team   `json:"team"`
	Pointer string `json:"pointer"`
	// Created says a new team was made; false: an existing one linked.
	Created bool `json:"created"`
}

// Text is the result as party pm init prints it: "created team ID
// (name): pointer", or "linked to team …" for an existing one.
func (r InitResult) Text() string {
	verb, name := "linked to team", ""
	if r.Created {
		verb = "created team"
	}
	if r.Team.Name != "" {
		name = " (" + Printable(r.Team.Name) + ")"
	}
	return fmt.Sprintf("%s %s%s: %s", verb, r.Team.ID, name, r.Pointer)
}

// Init links dir to a team: a new one (a random UUID, its directory under
// the state root) or, with Team, an existing one. A directory already
// linked is refused, except when it is linked to that same team.
func Init(ctx context.Context, o InitOptions) (InitResult, error) {
	path := filepath.Join(o.Dir, PointerFile)
	old, err := readPointer(path)
	switch {
	case err == nil && o.Team != "" && old == o.Team:
		s, err := OpenFS(ctx, TeamDir(o.Root, old), o.Clock)
		if err != nil {
			return InitResult{}, err
		}
		t, err := s.Team(ctx)
		return InitResult{Team: t, Pointer: path}, err
	case err == nil:
		return InitResult{}, fmt.Errorf("%s links this directory to team %s already (party pm init --team %s links it again): %w", path, old, old, ErrInvalid)
	case !errors.Is(err, os.ErrNotExist):
		return InitResult{}, err
	}
	res := InitResult{Pointer: path}
	if o.Team != "" {
		if !uuidRE.MatchString(o.Team) {
			return InitResult{}, fmt.Errorf("team %q is not a team id: %w", o.Team, ErrInvalid)
		}
		s, err := OpenFS(ctx, TeamDir(o.Root, o.Team), o.Clock)
		if err != nil {
			return InitResult{}, err
		}
		if res.Team, err = s.Team(ctx); err != nil {
			return InitResult{}, err
		}
	} else {
		id, err := NewTeamID()
		if err != nil {
			return InitResult{}, err
		}
		res.Team = Team{ID: id, Name: o.Name, Created: o.Clock.Now().UTC()}
		if _, err := CreateFS(ctx, TeamDir(o.Root, id), res.Team, o.Actor, o.Clock); err != nil {
			return InitResult{}, err
		}
		res.Created = true
	}
	b, _ := json.MarshalIndent(pointer{ID: res.Team.ID}, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return InitResult{}, err
	}
	if err := state.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return InitResult{}, err
	}
	return res, nil
}
