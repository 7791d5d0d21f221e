"""WebRL's actor, critic and ORM objectives in PyTorch behind webrl-temporal's external-trainer contract."""
