CREATE TABLE `response_cache` (
	`key` text PRIMARY KEY NOT NULL,
	`scope` text NOT NULL,
	`protocol` text NOT NULL,
	`answer` text NOT NULL,
	`usage` text NOT NULL,
	`cost_nanos` integer NOT NULL,
	`bytes` integer NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `response_cache_created_idx` ON `response_cache` (`created_at`);--> statement-breakpoint
CREATE INDEX `response_cache_scope_idx` ON `response_cache` (`scope`);--> statement-breakpoint
ALTER TABLE `usage_records` ADD `alias` text;--> statement-breakpoint
ALTER TABLE `usage_records` ADD `cache_hit` integer DEFAULT false NOT NULL;