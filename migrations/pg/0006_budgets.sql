ALTER TABLE "accounts" ADD COLUMN "budgets" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "budgets" text;