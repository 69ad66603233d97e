package embedded

import (
	"context"
	"log/slog"

	serverlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// serverLogLevel is the least level of the embedded server's messages that
// reach the logger: the server is chatty at info (shard, membership and
// system-worker life cycle) and a dev user only needs its warnings.
const serverLogLevel = slog.LevelWarn

// orDefault returns log, or slog.Default() when log is nil.
func orDefault(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.Default()
	}
	return log
}

// serverLogger adapts an slog.Logger to the server's log.Logger, dropping
// messages below min. Panic and Fatal are logged as errors and never exit:
// the embedded server must not end the process it lives in.
type serverLogger struct {
	log *slog.Logger
	min *slog.LevelVar // shared by every derived logger; raised at Stop
}

var (
	_ serverlog.Logger      = serverLogger{}
	_ serverlog.WithLogger  = serverLogger{}
	_ serverlog.SkipLogger  = serverLogger{}
	_ serverlog.SLogWrapper = serverLogger{}
)

func newServerLogger(log *slog.Logger) serverLogger {
	min := new(slog.LevelVar)
	min.Set(serverLogLevel)
	return serverLogger{log: log.With("component", "temporal-server"), min: min}
}

func (s serverLogger) Debug(msg string, tags ...tag.Tag)  { s.emit(slog.LevelDebug, msg, tags) }
func (s serverLogger) Info(msg string, tags ...tag.Tag)   { s.emit(slog.LevelInfo, msg, tags) }
func (s serverLogger) Warn(msg string, tags ...tag.Tag)   { s.emit(slog.LevelWarn, msg, tags) }
func (s serverLogger) Error(msg string, tags ...tag.Tag)  { s.emit(slog.LevelError, msg, tags) }
func (s serverLogger) DPanic(msg string, tags ...tag.Tag) { s.emit(slog.LevelError, msg, tags) }
func (s serverLogger) Panic(msg string, tags ...tag.Tag)  { s.emit(slog.LevelError, msg, tags) }
func (s serverLogger) Fatal(msg string, tags ...tag.Tag)  { s.emit(slog.LevelError, msg, tags) }

// With returns a logger that adds tags to every message.
func (s serverLogger) With(tags ...tag.Tag) serverlog.Logger {
	return serverLogger{log: s.log.With(attrsToArgs(tags)...), min: s.min}
}

// Skip is a no-op: slog records its own caller, if at all.
func (s serverLogger) Skip(int) serverlog.Logger { return s }

// SLog lets the server's own slog bridge reuse our logger (and its level).
func (s serverLogger) SLog() *slog.Logger {
	return slog.New(minLevelHandler{Handler: s.log.Handler(), min: s.min})
}

func (s serverLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	if level < s.min.Level() || !s.log.Enabled(context.Background(), level) {
		return
	}
	attrs := make([]slog.Attr, len(tags))
	for i, t := range tags {
		attrs[i] = slog.Any(t.Key(), t.Value())
	}
	s.log.LogAttrs(context.Background(), level, msg, attrs...)
}

func attrsToArgs(tags []tag.Tag) []any {
	args := make([]any, len(tags))
	for i, t := range tags {
		args[i] = slog.Any(t.Key(), t.Value())
	}
	return args
}

// minLevelHandler drops records below min before the wrapped handler sees them.
type minLevelHandler struct {
	slog.Handler
	min slog.Leveler
}

func (h minLevelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min.Level() && h.Handler.Enabled(ctx, l)
}

func (h minLevelHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevelHandler{Handler: h.Handler.WithAttrs(a), min: h.min}
}

func (h minLevelHandler) WithGroup(n string) slog.Handler {
	return minLevelHandler{Handler: h.Handler.WithGroup(n), min: h.min}
}
