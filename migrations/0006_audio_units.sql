ALTER TABLE `usage_records` ADD `audio_ms` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_records` ADD `characters` integer DEFAULT 0 NOT NULL;