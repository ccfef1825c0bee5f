// Package task keeps a party's tasks and milestones: what is to be done,
// by whom, in what state, and who changed what. Two stores hold them:
// files under the state root with an audit log (FS, here), and GitHub
// Issues through the gh CLI (package core/task/github). The CLI's `party
// pm` commands speak only to the Store interface; core/party picks the
// store (pm.storage, pm.repo). Update is a change as party pm task
// update takes it; Edit and EditDoc open a document in the user's editor
// and save it only over the text it opened (edit.go).
package task
