"""A whole class: the batch, its shards and their merge, the final export."""
