package storage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/dbtrail/dbtrail/internal/digest"
)

// put uploads body. An object already holding d (same size, same SHA-256
// metadata) is left alone and body is not read. Below PartSize the content
// is read into memory, checked, and sent in one PutObject with its SHA-256
// checksum; from PartSize up it goes through the transfer manager in parts,
// each with its SHA-256 checksum, while the whole content is hashed: a
// mismatch fails the last read, which aborts the multipart upload before it
// completes.
func (s *s3Bucket) put(ctx context.Context, name string, body io.Reader, d digest.Digest) error {
	info, _, err := s.head(ctx, name)
	switch {
	case err == nil && info.Size == d.Size && info.SHA256 == d.SHA256:
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	meta := map[string]string{metaSHA256: d.SHA256}
	if d.Size < s.cfg.PartSize {
		data, err := readVerified(ctx, name, body, d)
		if err != nil {
			return err
		}
		_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
			Bucket:         &s.cfg.Bucket,
			Key:            aws.String(s.key(name)),
			Body:           bytes.NewReader(data),
			ContentLength:  aws.Int64(d.Size),
			ChecksumSHA256: aws.String(checksumSHA256(d.SHA256)),
			Metadata:       meta,
		})
		return err
	}
	_, err = s.tm.UploadObject(ctx, &transfermanager.UploadObjectInput{
		Bucket:        &s.cfg.Bucket,
		Key:           aws.String(s.key(name)),
		Body:          newVerifyingReader(ctx, name, body, d),
		ContentLength: aws.Int64(d.Size),
		Metadata:      meta,
	})
	return err
}

// checksumSHA256 turns a hex SHA-256 into the base64 form of
// x-amz-checksum-sha256.
func checksumSHA256(hexSum string) string {
	b, _ := hex.DecodeString(hexSum)
	return base64.StdEncoding.EncodeToString(b)
}

// copy copies src to dst inside the bucket, metadata included. The source
// is pinned by its ETag (CopySourceIfMatch). A dst that already holds the
// same size and SHA-256 is left alone.
func (s *s3Bucket) copy(ctx context.Context, src, dst string) error {
	sinfo, sout, err := s.head(ctx, src)
	if err != nil {
		return err
	}
	if src == dst {
		return nil
	}
	dinfo, _, err := s.head(ctx, dst)
	switch {
	case err == nil && sinfo.SHA256 != "" && dinfo.SHA256 == sinfo.SHA256 && dinfo.Size == sinfo.Size:
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	source := copySource(s.cfg.Bucket, s.key(src))
	if sinfo.Size <= s.maxCopySize {
		_, err := s.client.CopyObject(ctx, &s3.CopyObjectInput{
			Bucket:            &s.cfg.Bucket,
			Key:               aws.String(s.key(dst)),
			CopySource:        aws.String(source),
			CopySourceIfMatch: sout.ETag,
			MetadataDirective: types.MetadataDirectiveCopy,
		})
		return notExist(err)
	}
	return s.copyParts(ctx, source, dst, sinfo.Size, sout)
}

// touch copies the object onto itself, its metadata given again
// (MetadataDirective REPLACE: S3 refuses a copy onto itself that changes
// nothing), pinned by its ETag: the object gets a new LastModified (in a
// versioned bucket, a new version). Above the single copy's limit it is
// copied in parts, as copy does.
func (s *s3Bucket) touch(ctx context.Context, name string) error {
	info, out, err := s.head(ctx, name)
	if err != nil {
		return err
	}
	source := copySource(s.cfg.Bucket, s.key(name))
	if info.Size > s.maxCopySize {
		return s.copyParts(ctx, source, name, info.Size, out)
	}
	_, err = s.client.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket:            &s.cfg.Bucket,
		Key:               aws.String(s.key(name)),
		CopySource:        aws.String(source),
		CopySourceIfMatch: out.ETag,
		MetadataDirective: types.MetadataDirectiveReplace,
		Metadata:          out.Metadata,
		ContentType:       out.ContentType,
	})
	return notExist(err)
}

// copySource is the x-amz-copy-source of a key: bucket/key, URL-escaped.
func copySource(bucket, key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return bucket + "/" + strings.Join(parts, "/")
}

// copyParts copies an object larger than one CopyObject allows with a
// multipart upload of UploadPartCopy ranges; on failure the upload is
// aborted, so nothing appears under dst.
func (s *s3Bucket) copyParts(ctx context.Context, source, dst string, size int64, src *s3.HeadObjectOutput) error {
	partSize := max(s.copyPartSize, (size+9999)/10000)
	up, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket:      &s.cfg.Bucket,
		Key:         aws.String(s.key(dst)),
		Metadata:    src.Metadata,
		ContentType: src.ContentType,
	})
	if err != nil {
		return err
	}
	abort := func(cause error) error {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := s.client.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{
			Bucket: &s.cfg.Bucket, Key: aws.String(s.key(dst)), UploadId: up.UploadId,
		}); err != nil {
			s.log.Warn("abort multipart copy", "key", s.key(dst), "upload_id", aws.ToString(up.UploadId), "error", err)
		}
		return notExist(cause)
	}
	var parts []types.CompletedPart
	for off, n := int64(0), int32(1); off < size; off, n = off+partSize, n+1 {
		end := min(off+partSize, size) - 1
		out, err := s.client.UploadPartCopy(ctx, &s3.UploadPartCopyInput{
			Bucket:            &s.cfg.Bucket,
			Key:               aws.String(s.key(dst)),
			UploadId:          up.UploadId,
			PartNumber:        aws.Int32(n),
			CopySource:        aws.String(source),
			CopySourceIfMatch: src.ETag,
			CopySourceRange:   aws.String(fmt.Sprintf("bytes=%d-%d", off, end)),
		})
		if err != nil {
			return abort(fmt.Errorf("part %d: %w", n, err))
		}
		if out.CopyPartResult == nil {
			return abort(fmt.Errorf("part %d: no copy result", n))
		}
		parts = append(parts, types.CompletedPart{ETag: out.CopyPartResult.ETag, PartNumber: aws.Int32(n)})
	}
	_, err = s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket:          &s.cfg.Bucket,
		Key:             aws.String(s.key(dst)),
		UploadId:        up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		return abort(err)
	}
	return nil
}
