package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"agenthub/app/api"
	"agenthub/backend"
)

const maxBody = 1 << 20

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		slog.Debug("write response", "err", err)
	}
}

// writeError sends the error body; status 0 picks the status from the code.
func writeError(w http.ResponseWriter, err error, status int) {
	body := api.ErrorOf(err)
	if status == 0 {
		status = body.HTTPStatus()
	}
	if body.Code == backend.FailInternal {
		slog.Error("request failed", "err", err)
	}
	writeJSON(w, status, body)
}

func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var syn *json.SyntaxError
		msg := "the request body is not valid JSON"
		if !errors.As(err, &syn) {
			msg = fmt.Sprintf("the request body does not fit: %v", err)
		}
		return &backend.Error{Code: backend.CodeInvalidInput, Message: msg, Err: err}
	}
	return nil
}

// reply writes v, or the error if err is set.
func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, err, 0)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
