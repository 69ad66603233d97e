package storage

import (
	"fmt"
	"net/url"
	"strings"
)

// RecordedURL turns a location a store gave (Store.Location, as the
// index's archive records keep it) back into a URL Open takes:
// "file:///path" as it is; "s3://bucket/prefix at ENDPOINT" as
// s3://bucket/prefix?endpoint=ENDPOINT&path-style=true (a server other
// than AWS, addressed in the path as S3-compatible servers are); "… at AWS"
// without an endpoint. A location carries no region, profile or
// credentials: Open takes them from the environment (the SDK's chain, as
// the worker that archived does). Anything else is an error naming it.
func RecordedURL(location string) (string, error) {
	if strings.HasPrefix(location, "file://") {
		return location, nil
	}
	where, endpoint, ok := strings.Cut(location, " at ")
	if !ok || !strings.HasPrefix(where, "s3://") || strings.ContainsAny(where, "?# ") {
		return "", fmt.Errorf("recorded location %q: not a location a store gives (file://… or s3://bucket/prefix at endpoint)", location)
	}
	out := where
	if endpoint != "AWS" {
		q := url.Values{}
		q.Set("endpoint", endpoint)
		q.Set("path-style", "true")
		out += "?" + q.Encode()
	}
	if _, err := ParseS3URL(out); err != nil {
		return "", fmt.Errorf("recorded location %q: %w", location, err)
	}
	return out, nil
}
