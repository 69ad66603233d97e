package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// swapAttempts bounds the read-and-conditional-write rounds of one
// SwapPointer when the server reports a conflict that is not a lost race.
const swapAttempts = 8

// readPointer gets the pointer object's value.
func (s *s3Bucket) readPointer(ctx context.Context, name string) (string, error) {
	v, _, err := s.readPointerTag(ctx, name)
	return v, err
}

// readPointerTag returns the pointer's value and ETag.
func (s *s3Bucket) readPointerTag(ctx context.Context, name string) (string, *string, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(name))})
	if err != nil {
		return "", nil, notExist(err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, maxPointerLen+1))
	if err != nil {
		return "", nil, err
	}
	if len(b) == 0 || len(b) > maxPointerLen {
		return "", nil, fmt.Errorf("not a pointer: %d bytes", aws.ToInt64(out.ContentLength))
	}
	return string(b), out.ETag, nil
}

// swapPointer reads the pointer and its ETag, compares the value with old,
// and writes next with If-Match on that ETag, or If-None-Match: * when old
// is "" (the pointer must not exist). The server applies the write only if
// the pointer is still the one read, so of two concurrent swaps one gets
// 412 Precondition Failed; SwapPointer then reads again and reports the
// winner's value in a *PointerMovedError. A 409 (a conflicting conditional
// write in flight) or a 404 (the pointer deleted meanwhile) is followed by
// another round as well.
func (s *s3Bucket) swapPointer(ctx context.Context, name, old, next string) error {
	sum := sha256.Sum256([]byte(next))
	hexSum := hex.EncodeToString(sum[:])
	for attempt := 1; ; attempt++ {
		cur, etag, err := s.readPointerTag(ctx, name)
		if due, err := swapDue(name, cur, old, next, err); !due {
			return err
		}
		in := &s3.PutObjectInput{
			Bucket:         &s.cfg.Bucket,
			Key:            aws.String(s.key(name)),
			Body:           bytes.NewReader([]byte(next)),
			ContentLength:  aws.Int64(int64(len(next))),
			ChecksumSHA256: aws.String(checksumSHA256(hexSum)),
			Metadata:       map[string]string{metaSHA256: hexSum},
		}
		if old == "" {
			in.IfNoneMatch = aws.String("*")
		} else {
			in.IfMatch = etag
		}
		_, err = s.client.PutObject(ctx, in)
		if err == nil {
			return nil
		}
		if !conditionFailed(err) {
			return err
		}
		if attempt == swapAttempts {
			return fmt.Errorf("gave up after %d conflicting rounds: %w", attempt, err)
		}
		s.log.Debug("pointer swap conflict; reading again", "key", s.key(name), "attempt", attempt, "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
}

// conditionFailed reports whether a conditional PutObject was refused
// because the object was not in the state the condition named.
func conditionFailed(err error) bool {
	switch httpStatus(err) {
	case http.StatusPreconditionFailed, http.StatusConflict, http.StatusNotFound:
		return true
	}
	switch apiCode(err) {
	case "PreconditionFailed", "ConditionalRequestConflict", "NoSuchKey":
		return true
	}
	return false
}
