ALTER TABLE `usage_records` ADD `cache_write_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_records` ADD `cache_write_1h_tokens` integer DEFAULT 0 NOT NULL;