package storage

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// delete removes the object. In an unversioned bucket that is one
// DeleteObject. In a versioned bucket a plain DeleteObject would only hide
// the object behind a delete marker and keep its data, so Delete removes
// every version and delete marker of the key instead, oldest first: the
// newest version goes last, so the object never shows an older content,
// and the first version Object Lock retains stops Delete with ErrLocked,
// leaving the object visible as it was.
func (s *s3Bucket) delete(ctx context.Context, name string) error {
	key := s.key(name)
	if !s.versioned {
		_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.cfg.Bucket, Key: &key})
		if err != nil && !isNotFound(err) {
			return s.lockError(ctx, key, nil, err)
		}
		return nil
	}
	versions, err := s.versions(ctx, key)
	if err != nil {
		return err
	}
	for _, v := range versions {
		_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.cfg.Bucket, Key: &key, VersionId: v.id})
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("version %s: %w", aws.ToString(v.id), s.lockError(ctx, key, v.id, err))
		}
	}
	return nil
}

// objectVersion is one version or delete marker of a key.
type objectVersion struct {
	id       *string
	modified time.Time
	latest   bool
	seen     int // position in the listing, which gives a key's versions newest first
}

// versions lists every version and delete marker of exactly key, oldest
// first (the latest one last).
func (s *s3Bucket) versions(ctx context.Context, key string) ([]objectVersion, error) {
	var out []objectVersion
	p := s3.NewListObjectVersionsPaginator(s.client, &s3.ListObjectVersionsInput{Bucket: &s.cfg.Bucket, Prefix: &key})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list versions: %w", err)
		}
		for _, v := range page.Versions {
			if aws.ToString(v.Key) == key {
				out = append(out, objectVersion{v.VersionId, aws.ToTime(v.LastModified), aws.ToBool(v.IsLatest), len(out)})
			}
		}
		for _, m := range page.DeleteMarkers {
			if aws.ToString(m.Key) == key {
				out = append(out, objectVersion{m.VersionId, aws.ToTime(m.LastModified), aws.ToBool(m.IsLatest), len(out)})
			}
		}
		// Keys after ours sort after it: stop paging once past it.
		if n := len(page.Versions); n > 0 && aws.ToString(page.Versions[n-1].Key) > key {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.latest != b.latest:
			return b.latest
		case !a.modified.Equal(b.modified):
			return a.modified.Before(b.modified)
		}
		return a.seen > b.seen
	})
	return out, nil
}

// lockError marks a refused delete as ErrLocked when Object Lock refused
// it: the server denied it (AccessDenied, 403) and either the bucket has
// Object Lock enabled or, where its configuration could not be read, the
// version is under a retention period or a legal hold. The answer comes
// from the server's codes and the object's lock state, never from an
// error's text.
func (s *s3Bucket) lockError(ctx context.Context, key string, version *string, err error) error {
	denied := apiCode(err) == "AccessDenied" || httpStatus(err) == http.StatusForbidden
	if denied && (s.objectLock || s.retained(ctx, key, version)) {
		return fmt.Errorf("%w: %w", ErrLocked, err)
	}
	return err
}

// retained reports whether the version of key is under a retention period
// that has not ended or a legal hold; an answer it cannot get is false.
func (s *s3Bucket) retained(ctx context.Context, key string, version *string) bool {
	ret, err := s.client.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: &s.cfg.Bucket, Key: &key, VersionId: version})
	if err == nil && ret.Retention != nil && aws.ToTime(ret.Retention.RetainUntilDate).After(time.Now()) {
		return true
	}
	hold, err := s.client.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: &s.cfg.Bucket, Key: &key, VersionId: version})
	return err == nil && hold.LegalHold != nil && hold.LegalHold.Status == types.ObjectLockLegalHoldStatusOn
}
