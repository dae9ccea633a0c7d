BEGIN;

CREATE TABLE public."order items" (
    id bigserial PRIMARY KEY,
    note text DEFAULT 'a;b'
);

CREATE INDEX order_items_note_idx ON public."order items" (note);

ALTER TABLE public."order items" ADD COLUMN total numeric;

CREATE OR REPLACE FUNCTION public.order_count() RETURNS integer AS $$
BEGIN
    RETURN (SELECT count(*) FROM public."order items");
END;
$$ LANGUAGE plpgsql;

CREATE VIEW public.recent AS
WITH latest AS (SELECT id FROM public."order items" ORDER BY id DESC LIMIT 10)
SELECT latest.id FROM latest;

COMMIT;
