package temporal

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
)

// The search attributes dbtrail sets on the jobs it starts (package jobs):
// every one a Keyword, registered by EnsureSearchAttributes.
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
	KeySource = sdktemporal.NewSearchAttributeKeyKeyword(AttrSource)
	KeyLabel  = sdktemporal.NewSearchAttributeKeyKeyword(AttrLabel)
	KeyTarget = sdktemporal.NewSearchAttributeKeyKeyword(AttrTarget)
)

// EnsureSearchAttributes registers dbtrail's search attributes (AttrSource,
// AttrLabel, AttrTarget) in namespace when they are missing; registered
// ones are left alone, so it is idempotent. It needs the operator API (the
// embedded server's, or an operator's permission on a cluster).
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	if namespace == "" {
		namespace = DefaultNamespace
	}
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
	if len(missing) == 0 {
		return nil
	}
	if _, err := op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		SearchAttributes: missing, Namespace: namespace}); err != nil {
		return fmt.Errorf("register search attributes %v in namespace %s: %w", keys(missing), namespace, err)
	}
	return nil
}

func keys(m map[string]enumspb.IndexedValueType) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
