package testsuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// StartPersistentS3 starts versitygw on 127.0.0.1:port over the folder dir,
// kept between runs (the demo's object storage): the root keys are made on
// the first run and read back from dir/credentials afterwards, and the
// bucket is created only when it is missing. Stop leaves dir in place.
// Install is not run: call it first.
func StartPersistentS3(ctx context.Context, dir string, port int, bucket string) (*S3Server, error) {
	bin, err := FindVersityGW(ctx)
	if err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	s := &S3Server{Bucket: bucket, Region: S3Region, Dir: dir, Port: port, opts: S3Options{Port: port, Bucket: bucket},
		bin: bin, keep: true}
	s.Endpoint = fmt.Sprintf("http://127.0.0.1:%d", port)
	for _, d := range []string{s.dataDir(), s.versionsDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("start versitygw: %w", err)
		}
	}
	if err := s.loadOrMakeKeys(); err != nil {
		return nil, fmt.Errorf("start versitygw in %s: %w", dir, err)
	}
	if err := s.launch(ctx); err != nil {
		return nil, fmt.Errorf("start versitygw in %s: %w", dir, err)
	}
	if _, err := s.Client().HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		if err := s.CreateBucket(ctx, bucket, false, 0); err != nil {
			_ = s.Stop()
			return nil, fmt.Errorf("start versitygw in %s: %w", dir, err)
		}
	}
	return s, nil
}

// loadOrMakeKeys reads the root keys from the credentials file, or makes
// new ones and writes the file (mode 0600).
func (s *S3Server) loadOrMakeKeys() error {
	b, err := os.ReadFile(s.CredentialsFile())
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, "=")
			switch k, v = strings.TrimSpace(k), strings.TrimSpace(v); {
			case !ok:
			case k == "aws_access_key_id":
				s.AccessKey = v
			case k == "aws_secret_access_key":
				s.SecretKey = v
			}
		}
		if s.AccessKey == "" || s.SecretKey == "" {
			return fmt.Errorf("credentials file %s has no keys", s.CredentialsFile())
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return s.makeKeys()
}

// makeKeys makes new random root keys and writes them to the credentials
// file (mode 0600).
func (s *S3Server) makeKeys() error {
	var err error
	if s.AccessKey, err = randomPassword(); err != nil {
		return err
	}
	if s.SecretKey, err = randomPassword(); err != nil {
		return err
	}
	creds := fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", s.AccessKey, s.SecretKey)
	return os.WriteFile(s.CredentialsFile(), []byte(creds), 0o600)
}
