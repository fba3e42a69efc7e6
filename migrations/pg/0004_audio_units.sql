ALTER TABLE "usage_records" ADD COLUMN "audio_ms" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "characters" bigint DEFAULT 0 NOT NULL;