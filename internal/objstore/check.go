package objstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Check verifies, for server start, that the store answers, accepts the
// credentials and has the bucket: it lists at most one key under the
// prefix, with a single attempt bounded by the timeout. The error is one
// line naming the configuration key to fix, such as
//
//	tiered_storage.bucket: bucket "x" does not exist at http://127.0.0.1:7070
//
// and wraps [ErrBucketMissing], [ErrAccessDenied] or [ErrUnreachable] when
// one of them applies.
func (s *Store) Check(ctx context.Context) error {
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	opts := minio.ListObjectsOptions{Prefix: s.Key(""), Recursive: true, MaxKeys: 1}
	var err error
	for oi := range s.probe.ListObjectsIter(rctx, s.bucket, opts) {
		err = oi.Err
		break
	}
	if err == nil {
		err = rctx.Err()
	}
	if err == nil {
		return nil
	}
	return s.explain(ctx, err)
}

// explain turns the error of the Check request into a one-line error
// naming the configuration key to fix.
func (s *Store) explain(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("objstore: check %s: %w", s.endpoint, err)
	}
	// Where the credentials came from, to say what to fix.
	secret, creds := "tiered_storage.secret_access_key", ""
	if s.envCreds {
		secret = "AWS_SECRET_ACCESS_KEY"
		creds = "; the credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY since tiered_storage.access_key_id is empty"
	}
	code, status := s3Code(err)
	switch code {
	case "NoSuchBucket":
		return configErr("tiered_storage.bucket",
			fmt.Sprintf("bucket %q does not exist at %s", s.bucket, s.endpoint), ErrBucketMissing, err)
	case "InvalidAccessKeyId", "XAdminUserNotFound":
		return configErr("tiered_storage.access_key_id",
			fmt.Sprintf("the object store refused the credentials (%s: unknown access key)%s", code, creds), ErrAccessDenied, err)
	case "SignatureDoesNotMatch":
		return configErr("tiered_storage.access_key_id",
			fmt.Sprintf("the object store refused the credentials (SignatureDoesNotMatch: check %s)%s", secret, creds), ErrAccessDenied, err)
	case "ExpiredToken", "InvalidToken":
		return configErr("tiered_storage.access_key_id",
			fmt.Sprintf("the object store refused the credentials (%s: the session token AWS_SESSION_TOKEN is expired or invalid)", code), ErrAccessDenied, err)
	case "AuthorizationHeaderMalformed", "PermanentRedirect", "InvalidRegion", "IllegalLocationConstraintException":
		return configErr("tiered_storage.region",
			fmt.Sprintf("the object store rejected region %q for bucket %q (%s)", s.region, s.bucket, code), err)
	}
	if code != "" || status != 0 {
		if errors.Is(classify(ctx, err), ErrAccessDenied) {
			return configErr("tiered_storage.access_key_id",
				fmt.Sprintf("the credentials may not list bucket %q at %s (%s)", s.bucket, s.endpoint, codeOrStatus(code, status))+creds, ErrAccessDenied, err)
		}
		return configErr("tiered_storage.endpoint",
			fmt.Sprintf("unexpected answer from %s for bucket %q: %s", s.endpoint, s.bucket, oneLine(err)), err)
	}
	var (
		unknownCA   x509.UnknownAuthorityError
		badHost     x509.HostnameError
		badCert     x509.CertificateInvalidError
		verifyError *tls.CertificateVerificationError
		dnsError    *net.DNSError
	)
	switch {
	case errors.As(err, &unknownCA) || errors.As(err, &badHost) || errors.As(err, &badCert) || errors.As(err, &verifyError):
		return configErr("tiered_storage.ca_file",
			fmt.Sprintf("cannot verify the TLS certificate of %s: %s", s.endpoint, cause(err)), ErrUnreachable, err)
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return configErr("tiered_storage.tls",
			fmt.Sprintf("%s answers plain HTTP; use an http:// endpoint or turn tls off", s.endpoint), ErrUnreachable, err)
	case errors.Is(err, context.DeadlineExceeded):
		return configErr("tiered_storage.endpoint",
			fmt.Sprintf("cannot reach %s: no answer within %s", s.endpoint, s.timeout), ErrUnreachable, err)
	case errors.As(err, &dnsError) && !s.pathStyle:
		return configErr("tiered_storage.endpoint",
			fmt.Sprintf("cannot reach %s: %s (virtual-hosted addressing puts the bucket name in the host name; most self-hosted stores need tiered_storage.path_style = true)", s.endpoint, cause(err)), ErrUnreachable, err)
	case errors.Is(classify(ctx, err), ErrUnreachable):
		return configErr("tiered_storage.endpoint",
			fmt.Sprintf("cannot reach %s: %s", s.endpoint, cause(err)), ErrUnreachable, err)
	}
	return configErr("tiered_storage.endpoint",
		fmt.Sprintf("checking bucket %q at %s: %s", s.bucket, s.endpoint, oneLine(err)), err)
}

// codeOrStatus names an error answer by its S3 code, or its HTTP status
// when it has no code.
func codeOrStatus(code string, status int) string {
	if code != "" {
		return code
	}
	return fmt.Sprintf("HTTP status %d", status)
}

// cause returns the text of the error under a *url.Error, which would
// otherwise repeat the whole request URL.
func cause(err error) string {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return oneLine(err)
}

// oneLine returns the error text with line breaks replaced by spaces.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
