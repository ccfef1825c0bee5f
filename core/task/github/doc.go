// Package github is party's GitHub task store (pm.storage github): a
// task.Store that keeps a team's tasks as issues of one repository and
// its milestones as the repository's milestones, through the gh CLI (argv
// only, JSON on stdin, `gh api`). What GitHub holds is the truth; the
// team's directory keeps what maps party's ids to GitHub's numbers:
//
//	id-map.json         {"1": {"issueNumber": 42, "nodeId": "I_…", "updatedAt": "…",
//	                           "createdAt": "…", "seen": {"title": …, "status": …,
//	                           "assignee": …, "milestone": …}}}
//	milestone-map.json  {"M1": {"number": 3, "title": "v1"}}
//	events.jsonl        every change, as the fs store writes it
//
// Status is a label, exactly one of party:pending, party:in_progress and
// party:done (created with their colors when missing); a closed issue is
// done whatever its labels, an open one without a status label is
// pending. party:done is put on before the issue is closed. party changes
// only its own labels, one by one (POST issues/N/labels for the new ones,
// DELETE issues/N/labels/NAME for its old ones), so a label a person puts
// on meanwhile stays. A task's
// assignee (a party role, not a GitHub user) is the label
// party:assignee:ROLE. A status or milestone change also posts an issue
// comment, one line per change:
//
//	**[party]** Status changed: `pending` → `in_progress` · Actor: codex · 2026-11-23T20:00:00Z
//
// and Log reads those lines back, with the local events: only the lines of
// comments by the user gh is logged in as.
//
// Conflicts: "seen" is the task as party last wrote it. Before an update
// the issue is read; when its updated_at is not the cached one and a
// field party tracks (title, status, assignee, milestone) differs from
// "seen", the update fails with *ConflictError listing them, unless
// Change.Force: then the change is applied over them (last write wins) and
// the returned task's Forced lists them. A change that touched none of
// those fields (a comment, the body) is no conflict.
//
// # Parts
//
//	open.go        Open: a team's store, files or GitHub, as pm.storage and the repository say
//	store.go       Config, New, the store and its calls through gh (api, list)
//	issues.go      tasks as issues: AddTask, Task, Tasks, conflicts (seen, diff)
//	update.go      Update (labels one by one, close and reopen, comments), Doc, SetDoc
//	milestones.go  AddMilestone (adopting GitHub's), Milestones, DoneMilestone
//	labels.go      the status and assignee labels (StatusLabel, StatusOf, WithStatus)
//	log.go         the comment lines (ParseComment) and Log
//	gh.go          Runner, the gh it runs (LookGh) and Error, what a failed run means
//	remote.go      CheckRepo, ParseRemote, RepoFromGit: the repository of a clone
//	record.go      store.json: the repository a team's tasks went to
package github
