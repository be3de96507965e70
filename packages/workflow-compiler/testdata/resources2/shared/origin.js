// Local copy: never used while the community directory holds the same path.
context.setProperty('origin', 'local');
