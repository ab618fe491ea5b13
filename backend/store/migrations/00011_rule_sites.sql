-- Issue 21: backend text for people goes out as message keys the UI
-- localises, and "always allow in this workspace" writes its rule where the
-- user chose (the data directory by default) rather than always into the
-- repository. approvals.messages holds the request's title and rule
-- preview as keys with arguments and the rule's location, as JSON
-- ({"titleMessage":…,"rulePreview":…,"ruleLocation":…}); an older row has
-- '{}' and shows its English title. grants.rule_site and grants.rule_id
-- name the rule a workspace grant wrote, so the rules list can say who
-- added it and when, and a revocation marks its grant revoked. Like 00001,
-- no Down: approvals and grants are history.

-- +goose Up
ALTER TABLE approvals ADD COLUMN messages TEXT NOT NULL DEFAULT '{}';
ALTER TABLE grants ADD COLUMN rule_site TEXT NOT NULL DEFAULT '';
ALTER TABLE grants ADD COLUMN rule_id TEXT NOT NULL DEFAULT '';
CREATE INDEX grants_rule ON grants(workspace_id, rule_site, rule_id) WHERE rule_id <> '';
