package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/api"
)

// apiJobTimeout bounds how long the demo follows its example API job.
const apiJobTimeout = 3 * time.Minute

// apiJob is the part of a job answer the demo reads.
type apiJob struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// apiExample starts a verify of the current snapshot through dbtrail dev's
// HTTP API (POST /v1/verifies), follows it (GET /v1/jobs/{id}) until it
// ends, and returns the two example curl commands with what they answered.
// The label carries the time, so every demo run starts a new job. The API
// needs dev's token (its token file, made on dev's first start): the
// commands read it from the file.
func (w *watcher) apiExample(ctx context.Context) (commands []string, answers []string, err error) {
	base := "http://" + w.cfg.apiAddr
	token, err := api.DevSecret(w.tokenFile)
	if err != nil {
		return nil, nil, err
	}
	curl := api.Curl(w.tokenFile)
	label := "demo-verify-" + time.Now().UTC().Format("20060102T150405Z")
	body := fmt.Sprintf(`{"source":%q,"label":%q}`, sourceName, label)
	commands = append(commands, fmt.Sprintf("%s -X POST %s/v1/verifies -d '%s'", curl, base, body))
	started, status, err := apiCall(ctx, http.MethodPost, base+"/v1/verifies", token, body)
	if err != nil {
		return commands, nil, err
	}
	answers = append(answers, started)
	if status != http.StatusAccepted {
		return commands, answers, fmt.Errorf("POST /v1/verifies answered %d, want 202", status)
	}
	var job apiJob
	if err := json.Unmarshal([]byte(started), &job); err != nil || job.ID == "" {
		return commands, answers, fmt.Errorf("POST /v1/verifies: no job id in %q", started)
	}
	url := base + "/v1/jobs/" + job.ID
	commands = append(commands, curl+" "+url)
	deadline := time.Now().Add(apiJobTimeout)
	for {
		got, status, err := apiCall(ctx, http.MethodGet, url, token, "")
		if err != nil {
			return commands, answers, err
		}
		if status != http.StatusOK {
			return commands, append(answers, got), fmt.Errorf("GET %s answered %d, want 200", url, status)
		}
		if err := json.Unmarshal([]byte(got), &job); err != nil {
			return commands, append(answers, got), fmt.Errorf("GET %s: %w", url, err)
		}
		if job.State != "running" {
			answers = append(answers, got)
			if job.State != "completed" {
				return commands, answers, fmt.Errorf("the verify job ended %s", job.State)
			}
			return commands, answers, nil
		}
		if time.Now().After(deadline) {
			return commands, append(answers, got), fmt.Errorf("the verify job still ran after %s", apiJobTimeout)
		}
		select {
		case <-ctx.Done():
			return commands, answers, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// apiCall sends one request with the bearer token and returns the answer's
// body, compacted.
func apiCall(ctx context.Context, method, url, token, body string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", resp.StatusCode, fmt.Errorf("%s %s: %w", method, url, err)
	}
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return string(b), resp.StatusCode, nil
	}
	return out.String(), resp.StatusCode, nil
}

// writeAPI writes the block's part on the example API calls.
func (w *watcher) writeAPI(b *strings.Builder, r backupResult) {
	fmt.Fprintf(b, " Start and follow jobs over the HTTP API of dbtrail dev (docs/api.md) with its token, from %s:\n", w.tokenFile)
	for i, c := range r.apiCommands {
		var answer string
		if i < len(r.apiAnswers) {
			answer = r.apiAnswers[i]
		}
		var err error
		if i == len(r.apiCommands)-1 {
			err = r.apiErr
		}
		writeExample(b, c, answer, err)
	}
}
