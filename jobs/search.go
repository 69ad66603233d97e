package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// The search attributes dbtrail sets on its jobs: every one a Keyword,
// registered by EnsureSearchAttributes.
const (
	// AttrSource is the source a job works on.
	AttrSource = "DbtrailSource"
	// AttrLabel is a job's label, unique per source.
	AttrLabel = "DbtrailLabel"
	// AttrTarget is a restore's target schema.
	AttrTarget = "DbtrailTarget"
)

// Typed keys of the search attributes above.
var (
	KeySource = temporal.NewSearchAttributeKeyKeyword(AttrSource)
	KeyLabel  = temporal.NewSearchAttributeKeyKeyword(AttrLabel)
	KeyTarget = temporal.NewSearchAttributeKeyKeyword(AttrTarget)
)

// EnsureSearchAttributes registers dbtrail's search attributes (AttrSource,
// AttrLabel, AttrTarget) in namespace when they are missing; registered
// ones are left alone, so it is idempotent. It needs the operator API (the
// embedded server's, or an operator's permission on a cluster).
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	op := c.OperatorService()
	have, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes of namespace %s: %w", namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, name := range []string{AttrSource, AttrLabel, AttrTarget} {
		if _, ok := have.GetCustomAttributes()[name]; !ok {
			missing[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
		}
	}
	if len(missing) > 0 {
		if _, err := op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
			SearchAttributes: missing, Namespace: namespace}); err != nil {
			return fmt.Errorf("register search attributes %v in namespace %s: %w", keys(missing), namespace, err)
		}
	}
	return waitUsable(ctx, c, namespace)
}

// waitUsable waits until a visibility query on the attributes is accepted:
// the frontend learns of newly registered attributes with its namespace
// cache's refresh, seconds after they are added.
func waitUsable(ctx context.Context, c client.Client, namespace string) error {
	q := fmt.Sprintf("%s = '' AND %s = '' AND %s = ''", AttrSource, AttrLabel, AttrTarget)
	ctx, cancel := context.WithTimeout(ctx, attrsWait)
	defer cancel()
	for {
		_, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace, Query: q})
		var bad *serviceerror.InvalidArgument
		switch {
		case err == nil:
			return nil
		case !errors.As(err, &bad) && ctx.Err() == nil:
			return fmt.Errorf("query jobs by search attribute in namespace %s: %w", namespace, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("search attributes of namespace %s not usable after %s: %w", namespace, attrsWait, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// attrsWait bounds waitUsable.
const attrsWait = time.Minute

func keys(m map[string]enumspb.IndexedValueType) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// SourceAttrs are the search attributes of a scheduled job of source.
func SourceAttrs(source string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(KeySource.ValueSet(source))
}
