// Community copy: shadows the local copy of the same path.
context.setProperty('origin', 'community');
