package workflows

import "github.com/dbtrail/dbtrail/activities"

// a names activities in the tests' mocks (env.OnActivity(a.Dump, ...));
// the workflows themselves name them by calls' constants.
var a *activities.Activities
