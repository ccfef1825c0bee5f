package github

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/partyhq/party/core/task"
)

type milestone struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// milestoneRef is one entry of milestone-map.json.
type milestoneRef struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
}

// milestoneNumbers maps GitHub's milestone numbers to party's ids.
func (g *store) milestoneNumbers() (map[int]string, map[string]milestoneRef, error) {
	m, err := readMap[milestoneRef](g.milestoneMapPath())
	if err != nil {
		return nil, nil, err
	}
	byNumber := map[int]string{}
	for id, r := range m {
		byNumber[r.Number] = id
	}
	return byNumber, m, nil
}

func (g *store) AddMilestone(ctx context.Context, actor, name string) (task.Milestone, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return task.Milestone{}, fmt.Errorf("milestone name: empty: %w", task.ErrInvalid)
	}
	unlock, err := g.lock(ctx)
	if err != nil {
		return task.Milestone{}, err
	}
	defer unlock()
	_, m, err := g.milestoneNumbers()
	if err != nil {
		return task.Milestone{}, err
	}
	var ms milestone
	err = g.api(ctx, "POST", g.repoPath("milestones"), map[string]string{"title": name}, &ms)
	if errors.Is(err, task.ErrInvalid) {
		// GitHub has one by that title already: adopt it, unless it is
		// this team's already.
		all, lerr := list[milestone](ctx, g, g.repoPath("milestones?state=all&per_page=100"))
		if lerr != nil {
			return task.Milestone{}, fmt.Errorf("github store: milestone %q: %w", name, lerr)
		}
		i := slices.IndexFunc(all, func(x milestone) bool { return x.Title == name })
		if i < 0 {
			return task.Milestone{}, fmt.Errorf("github store: milestone %q: %w", name, err)
		}
		ms, err = all[i], nil
		for id, r := range m {
			if r.Number == ms.Number {
				return task.Milestone{}, fmt.Errorf("milestone %q exists already (id %s): %w", name, id, task.ErrInvalid)
			}
		}
	}
	if err != nil {
		return task.Milestone{}, fmt.Errorf("github store: milestone %q: %w", name, err)
	}
	id := "M" + strconv.Itoa(task.NextNumber(slices.Collect(maps.Keys(m)), "M"))
	m[id] = milestoneRef{Number: ms.Number, Title: ms.Title}
	if err := writeMap(g.milestoneMapPath(), m); err != nil {
		return task.Milestone{}, err
	}
	if err := g.event(task.Event{Event: "milestone_added", ID: id, To: name, Actor: actor}); err != nil {
		return task.Milestone{}, err
	}
	return milestoneOf(id, ms), nil
}

func milestoneOf(id string, ms milestone) task.Milestone {
	return task.Milestone{ID: id, Name: ms.Title, Done: ms.State == "closed", Created: ms.CreatedAt, Updated: ms.UpdatedAt, Number: ms.Number}
}

func (g *store) Milestones(ctx context.Context) ([]task.Milestone, error) {
	byNumber, m, err := g.milestoneNumbers()
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return []task.Milestone{}, nil
	}
	all, err := list[milestone](ctx, g, g.repoPath("milestones?state=all&per_page=100"))
	if err != nil {
		return nil, fmt.Errorf("github store: milestones: %w", err)
	}
	out := []task.Milestone{}
	found := map[string]bool{}
	for _, ms := range all {
		if id, ok := byNumber[ms.Number]; ok {
			out = append(out, milestoneOf(id, ms))
			found[id] = true
		}
	}
	for id, r := range m {
		if !found[id] { // gone from GitHub: what party knew of it
			out = append(out, task.Milestone{ID: id, Name: r.Title, Number: r.Number})
		}
	}
	slices.SortFunc(out, func(a, b task.Milestone) int { return task.CompareIDs(a.ID, b.ID) })
	return out, nil
}

func (g *store) DoneMilestone(ctx context.Context, actor, id string) (task.Milestone, error) {
	unlock, err := g.lock(ctx)
	if err != nil {
		return task.Milestone{}, err
	}
	defer unlock()
	_, m, err := g.milestoneNumbers()
	if err != nil {
		return task.Milestone{}, err
	}
	r, ok := m[id]
	if !ok {
		return task.Milestone{}, fmt.Errorf("milestone %s: %w", id, task.ErrNotFound)
	}
	var ms milestone
	if err := g.api(ctx, "GET", g.repoPath(fmt.Sprintf("milestones/%d", r.Number)), nil, &ms); err != nil {
		return task.Milestone{}, fmt.Errorf("github store: milestone %s (#%d): %w", id, r.Number, err)
	}
	if ms.State == "closed" {
		return milestoneOf(id, ms), nil
	}
	if err := g.api(ctx, "PATCH", g.repoPath(fmt.Sprintf("milestones/%d", r.Number)), map[string]string{"state": "closed"}, &ms); err != nil {
		return task.Milestone{}, fmt.Errorf("github store: milestone %s (#%d): %w", id, r.Number, err)
	}
	if err := g.event(task.Event{Event: "milestone_done", ID: id, Field: "done", From: "false", To: "true", Actor: actor}); err != nil {
		return task.Milestone{}, err
	}
	return milestoneOf(id, ms), nil
}
