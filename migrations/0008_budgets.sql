ALTER TABLE `accounts` ADD `budgets` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `budgets` text;