package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

// S3Config configures an S3 store. ParseS3URL fills it from an s3:// URL.
type S3Config struct {
	Bucket string
	// Prefix is prepended to every name, with a '/' between: the object
	// "a/b" is the key "<Prefix>/a/b". Empty: names are keys.
	Prefix string
	// Endpoint is the service's base URL (http://127.0.0.1:7070); empty
	// means AWS's endpoint for Region.
	Endpoint string
	// Region is the signing region; empty means the SDK's environment and
	// shared config, else DefaultRegion.
	Region string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key)
	// instead of the host name; most S3-compatible servers need it.
	PathStyle bool
	// CredentialsFile, when set, is a shared credentials file (the INI
	// format of ~/.aws/credentials) whose Profile section holds the keys;
	// nothing else is consulted. Empty: the SDK's default chain
	// (environment, shared files, web identity, container and instance
	// roles).
	CredentialsFile string
	// Profile names the profile in CredentialsFile or the shared config;
	// empty means "default".
	Profile string
	// HTTPClient replaces the SDK's HTTP client (tests count traffic with
	// it); AWS_CA_BUNDLE does not apply to it.
	HTTPClient *http.Client
	// PartSize is the multipart part size: objects of at least PartSize
	// bytes are uploaded in parts. 0 means DefaultPartSize; the minimum is
	// 5 MiB.
	PartSize int64
	Logger   *slog.Logger
}

// Defaults of S3Config.
const (
	DefaultRegion   = "us-east-1"
	DefaultPartSize = 16 << 20
	minPartSize     = 5 << 20
	// maxCopySize is the largest object one CopyObject may copy; larger
	// ones are copied part by part (UploadPartCopy).
	maxCopySize = 5 << 30
	// copyPartSize is the part size of such a copy.
	copyPartSize = 512 << 20
	// metaSHA256 is the user metadata key (x-amz-meta-sha256) holding an
	// object's SHA-256 in lower-case hex.
	metaSHA256 = "sha256"
)

// S3 is a Store in an S3 bucket (AWS or a compatible server) under a key
// prefix. Every upload carries a SHA-256 checksum the server verifies
// (x-amz-checksum-sha256 on a single PUT, per part on a multipart upload),
// which is also what a bucket with Object Lock demands; the object's
// SHA-256 is kept as user metadata for Stat. Objects of at least PartSize
// bytes are uploaded in parts through the SDK's transfer manager, the whole
// content hashed on the way so that a digest mismatch aborts the upload
// before it completes. Copy is a server-side CopyObject (UploadPartCopy
// above 5 GiB). Pointers are small objects replaced by PutObject with
// If-Match on the ETag read (If-None-Match: * to create one): the server
// refuses the write if the pointer changed meanwhile. In a versioned
// bucket Delete removes every version of the name, oldest first, and stops
// at the first one Object Lock retains.
type S3 struct {
	checked
	*s3Bucket
}

// s3Bucket is S3's backend.
type s3Bucket struct {
	cfg        S3Config
	client     *s3.Client
	tm         *transfermanager.Client
	log        *slog.Logger
	versioned  bool // versioning enabled or suspended: Delete removes versions
	objectLock bool // Object Lock enabled on the bucket

	// maxCopySize and copyPartSize are the constants, lowered by tests.
	maxCopySize, copyPartSize int64
}

// NewS3 connects to the bucket and checks it cheaply (a listing of at most
// one key), so that a missing bucket, wrong credentials or an unreachable
// endpoint fail here, with the bucket and endpoint named. It also reads the
// bucket's versioning and Object Lock state, which Delete follows.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	b, err := openBucket(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open s3 bucket %q at %s: %w", cfg.Bucket, endpointName(cfg), err)
	}
	return &S3{checked{b}, b}, nil
}

func endpointName(cfg S3Config) string {
	if cfg.Endpoint != "" {
		return cfg.Endpoint
	}
	return "AWS"
}

func openBucket(ctx context.Context, cfg S3Config) (*s3Bucket, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("no bucket")
	}
	cfg.Prefix = strings.Trim(cfg.Prefix, "/")
	if cfg.Prefix != "" {
		if err := CheckName(cfg.Prefix); err != nil {
			return nil, fmt.Errorf("bad prefix: %w", err)
		}
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = DefaultPartSize
	}
	if cfg.PartSize < minPartSize {
		return nil, fmt.Errorf("part size %d is below the S3 minimum of %d", cfg.PartSize, minPartSize)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	log := cfg.Logger
	opts := []func(*config.LoadOptions) error{
		// The SDK's own messages (a response without a checksum to check,
		// a multipart checksum it cannot check) are routine: debug level.
		config.WithLogger(logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
			log.Debug("s3 sdk message", "sdk_level", string(c), "detail", fmt.Sprintf(format, v...))
		})),
	}
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.CredentialsFile != "" {
		creds, err := fileCredentials(ctx, cfg.CredentialsFile, cfg.Profile, cfg.Logger)
		if err != nil {
			return nil, err
		}
		opts = append(opts, config.WithCredentialsProvider(creds))
	} else if cfg.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(cfg.Profile))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load aws configuration: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = DefaultRegion
	}
	cfg.Region = awsCfg.Region
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		if cfg.HTTPClient != nil {
			// Set here, not in LoadDefaultConfig, which refuses a plain
			// *http.Client when AWS_CA_BUNDLE is set.
			o.HTTPClient = cfg.HTTPClient
		}
	})
	s := &s3Bucket{
		cfg:    cfg,
		client: client,
		tm: transfermanager.New(client, func(o *transfermanager.Options) {
			o.PartSizeBytes = cfg.PartSize
			o.MultipartUploadThreshold = cfg.PartSize
			o.Concurrency = 4
			o.ChecksumAlgorithm = tmtypes.ChecksumAlgorithmSha256
			o.FailTimeout = 30 * time.Second
		}),
		log:          cfg.Logger,
		maxCopySize:  maxCopySize,
		copyPartSize: copyPartSize,
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// fileCredentials reads the keys of profile from a shared credentials file.
func fileCredentials(ctx context.Context, file, profile string, log *slog.Logger) (aws.CredentialsProvider, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("credentials file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		log.Warn("s3 credentials file is readable by other users", "file", file, "mode", st.Mode().Perm().String())
	}
	if profile == "" {
		profile = "default"
	}
	sc, err := config.LoadSharedConfigProfile(ctx, profile, func(o *config.LoadSharedConfigOptions) {
		o.CredentialsFiles = []string{file}
		o.ConfigFiles = []string{}
	})
	if err != nil {
		return nil, fmt.Errorf("credentials file %s: %w", file, err)
	}
	if !sc.Credentials.HasKeys() {
		return nil, fmt.Errorf("credentials file %s: profile %q has no aws_access_key_id and aws_secret_access_key", file, profile)
	}
	return credentials.StaticCredentialsProvider{Value: sc.Credentials}, nil
}

// check fails unless the bucket answers a listing of one key under the
// prefix (a GET, whose error names its cause: HeadBucket's cannot, and some
// servers answer it 404 for wrong keys), and reads the bucket's versioning
// and Object Lock state.
func (s *s3Bucket) check(ctx context.Context) error {
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket:  &s.cfg.Bucket,
		Prefix:  aws.String(s.key("")),
		MaxKeys: aws.Int32(1),
	})
	if err != nil {
		code := apiCode(err)
		switch {
		case code == "NoSuchBucket":
			return fmt.Errorf("the bucket does not exist: %w", err)
		case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "AccessDenied" ||
			code == "XAdminUserNotFound" || // versitygw's answer (404) to an unknown access key
			httpStatus(err) == http.StatusForbidden:
			return fmt.Errorf("access denied: check the credentials and their rights on the bucket: %w", err)
		case code == "PermanentRedirect" || code == "AuthorizationHeaderMalformed" || httpStatus(err) == http.StatusMovedPermanently:
			return fmt.Errorf("the bucket is not in region %s: %w", s.cfg.Region, err)
		case httpStatus(err) == 0:
			return fmt.Errorf("cannot reach the endpoint: %w", err)
		}
		return err
	}
	v, err := s.client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &s.cfg.Bucket})
	if err != nil {
		s.log.Warn("cannot read the bucket's versioning state; deletes remove the current version only",
			"bucket", s.cfg.Bucket, "error", err)
	} else {
		s.versioned = v.Status != ""
	}
	lock, err := s.client.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &s.cfg.Bucket})
	if err == nil && lock.ObjectLockConfiguration != nil {
		s.objectLock = lock.ObjectLockConfiguration.ObjectLockEnabled == types.ObjectLockEnabledEnabled
	}
	return nil
}

// location returns "s3://<bucket>/<prefix> at <endpoint>".
func (s *s3Bucket) location() string {
	return fmt.Sprintf("s3://%s/%s at %s", s.cfg.Bucket, s.cfg.Prefix, endpointName(s.cfg))
}

// Versioned reports whether the bucket keeps versions (Delete then removes
// every version of a name).
func (s *s3Bucket) Versioned() bool { return s.versioned }

// ObjectLock reports whether Object Lock is enabled on the bucket.
func (s *s3Bucket) ObjectLock() bool { return s.objectLock }

// key returns the key of a name, or of a listing prefix.
func (s *s3Bucket) key(name string) string {
	if s.cfg.Prefix == "" {
		return name
	}
	return s.cfg.Prefix + "/" + name
}

// name returns the name of a key under the prefix, or false.
func (s *s3Bucket) name(key string) (string, bool) {
	name := key
	if s.cfg.Prefix != "" {
		var ok bool
		if name, ok = strings.CutPrefix(key, s.cfg.Prefix+"/"); !ok {
			return "", false
		}
	}
	if CheckName(name) != nil || reserved(name) {
		return "", false
	}
	return name, true
}

// httpStatus returns the HTTP status of a failed request, or 0.
func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// apiCode returns the S3 error code of err (NoSuchKey, AccessDenied, ...),
// or "".
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// isNotFound reports whether err says the key does not exist (a missing
// bucket is not that).
func isNotFound(err error) bool {
	switch apiCode(err) {
	case "NoSuchBucket":
		return false
	case "NoSuchKey", "NotFound", "NoSuchVersion":
		return true
	}
	return httpStatus(err) == http.StatusNotFound
}

// notExist turns a not-found error into fs.ErrNotExist and returns any other
// error unchanged.
func notExist(err error) error {
	if err != nil && isNotFound(err) {
		return fs.ErrNotExist
	}
	return err
}
