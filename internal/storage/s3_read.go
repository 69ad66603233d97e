package storage

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/dbtrail/dbtrail/internal/digest"
)

// stat heads the object; the SHA-256 comes from its metadata.
func (s *s3Bucket) stat(ctx context.Context, name string) (Info, error) {
	info, _, err := s.head(ctx, name)
	return info, err
}

// head returns the object's Info and ETag.
func (s *s3Bucket) head(ctx context.Context, name string) (Info, *s3.HeadObjectOutput, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(name))})
	if err != nil {
		return Info{}, nil, notExist(err)
	}
	info := Info{Name: name, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}
	if sum := out.Metadata[metaSHA256]; checkDigest(digest.Digest{SHA256: sum}) == nil {
		info.SHA256 = sum
	}
	return info, out, nil
}

// open gets the whole object.
func (s *s3Bucket) open(ctx context.Context, name string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key(name))})
	if err != nil {
		return nil, notExist(err)
	}
	return out.Body, nil
}

// openReaderAt heads the object; each ReadAt is a ranged GET of the same
// version (If-Match on its ETag), so a replaced object fails the read
// instead of mixing two contents.
func (s *s3Bucket) openReaderAt(ctx context.Context, name string) (ReaderAt, error) {
	info, out, err := s.head(ctx, name)
	if err != nil {
		return nil, err
	}
	return &s3ReaderAt{s: s, ctx: ctx, name: name, size: info.Size, etag: out.ETag}, nil
}

type s3ReaderAt struct {
	s    *s3Bucket
	ctx  context.Context
	name string
	size int64
	etag *string
}

func (r *s3ReaderAt) Size() int64  { return r.size }
func (r *s3ReaderAt) Close() error { return nil }

func (r *s3ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset %d", r.name, off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	want := p
	if rest := r.size - off; int64(len(want)) > rest {
		want = want[:rest]
	}
	out, err := r.s.client.GetObject(r.ctx, &s3.GetObjectInput{
		Bucket:  &r.s.cfg.Bucket,
		Key:     aws.String(r.s.key(r.name)),
		Range:   aws.String(fmt.Sprintf("bytes=%d-%d", off, off+int64(len(want))-1)),
		IfMatch: r.etag,
	})
	if err != nil {
		if httpStatus(err) == http.StatusPreconditionFailed {
			err = fmt.Errorf("the object changed since it was opened: %w", err)
		}
		return 0, fmt.Errorf("read %s at %d: %w", r.name, off, notExist(err))
	}
	defer out.Body.Close()
	n, err := io.ReadFull(out.Body, want)
	if err != nil {
		return n, fmt.Errorf("read %s at %d: %w", r.name, off, err)
	}
	if len(want) < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// list pages through ListObjectsV2 under the prefix.
func (s *s3Bucket) list(ctx context.Context, prefix string, fn func(Info) error) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: &s.cfg.Bucket,
		Prefix: aws.String(s.key(prefix)),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, o := range page.Contents {
			name, ok := s.name(aws.ToString(o.Key))
			if !ok {
				continue
			}
			if err := fn(Info{Name: name, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)}); err != nil {
				return err
			}
		}
	}
	return nil
}
