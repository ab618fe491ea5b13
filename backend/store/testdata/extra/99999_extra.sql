-- A later migration used only by tests: it adds a column, as real future
-- migrations will, and must leave every row of history in place.
-- +goose Up
ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';
