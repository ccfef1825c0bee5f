// Package ghrepo checks a GitHub repository written as owner/name, the one
// rule that config (pm.repo) and the task store (--repo, a git remote)
// share. It imports nothing of party's, so both can use it.
package ghrepo
