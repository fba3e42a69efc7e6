CREATE TABLE "response_cache" (
	"key" text PRIMARY KEY NOT NULL,
	"scope" text NOT NULL,
	"protocol" text NOT NULL,
	"answer" text NOT NULL,
	"usage" text NOT NULL,
	"cost_nanos" bigint NOT NULL,
	"bytes" bigint NOT NULL,
	"created_at" bigint DEFAULT ((extract(epoch from clock_timestamp()) * 1000)::bigint) NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "alias" text;--> statement-breakpoint
ALTER TABLE "usage_records" ADD COLUMN "cache_hit" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "response_cache_created_idx" ON "response_cache" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "response_cache_scope_idx" ON "response_cache" USING btree ("scope");