// Package calls is the contract between the workflows and their
// activities: each activity's name (names.go), input and result, and the
// heartbeat interval the workflows' timeouts are built on. The workflows
// schedule activities by these names and types and import no activity;
// package activities implements them. Its types carry the domain's plans
// (foldplan, moment) as the workflows hand them on, so it is not light:
// a client of the workflows reads package payload instead.
//
// Its types are the JSON of workflow histories: a field is renamed or
// removed only with a decoder for the histories recorded before.
package calls
